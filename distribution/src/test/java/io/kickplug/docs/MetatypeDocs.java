package io.kickplug.docs;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * The ConfigAdmin PIDs a bundle describes in its metatype XML ({@code OSGI-INF/metatype/*.xml}, which bnd writes from
 * {@code @ObjectClassDefinition} and {@code @Designate}): every designated PID with its attributes. An object class
 * that no {@code Designate} names is no PID users set, and is left out.
 */
final class MetatypeDocs {

    static final String FOLDER = "OSGI-INF/metatype/";

    /** One enumerated value of an attribute. */
    record Choice(String value, String label) {
    }

    /**
     * One attribute ({@code AD}).
     *
     * @param defaultValue its default, or {@code null} for none
     * @param min its minimum, or {@code null}
     * @param max its maximum, or {@code null}
     * @param cardinality 0 for a single value, otherwise the most values (negative: a List, positive: an array)
     */
    record Attribute(String id, String type, String defaultValue, List<Choice> choices, String min, String max,
            boolean required, int cardinality, String description) {
    }

    /** One PID (or factory PID) with its object class. */
    record Pid(String pid, boolean factory, String bundle, String name, String description,
            List<Attribute> attributes) {
    }

    private MetatypeDocs() {
    }

    /** The designated PIDs of a bundle jar, by PID. */
    static List<Pid> read(JarFile jar, String bundle) throws IOException {
        List<Pid> out = new ArrayList<>();
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
            JarEntry entry = e.nextElement();
            String n = entry.getName();
            if (n.startsWith(FOLDER) && n.endsWith(".xml") && n.indexOf('/', FOLDER.length()) < 0) {
                try (InputStream in = jar.getInputStream(entry)) {
                    out.addAll(parse(in, bundle, jar.getName() + "!/" + n));
                }
            }
        }
        out.sort(Comparator.comparing(Pid::pid));
        return out;
    }

    /** The designated PIDs of one metatype document. */
    static List<Pid> parse(InputStream xml, String bundle, String where) throws IOException {
        Element root;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            root = factory.newDocumentBuilder().parse(xml).getDocumentElement();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read metatype " + where + ": " + e.getMessage(), e);
        }
        Map<String, Element> ocds = new HashMap<>();
        for (Element ocd : children(root, "OCD")) {
            ocds.put(ocd.getAttribute("id"), ocd);
        }
        List<Pid> out = new ArrayList<>();
        for (Element designate : children(root, "Designate")) {
            boolean factory = designate.hasAttribute("factoryPid") && !designate.getAttribute("factoryPid").isEmpty();
            String pid = factory ? designate.getAttribute("factoryPid") : designate.getAttribute("pid");
            for (Element object : children(designate, "Object")) {
                Element ocd = ocds.get(object.getAttribute("ocdref"));
                if (ocd == null) {
                    throw new IOException(where + ": Designate " + pid + " names object class '"
                            + object.getAttribute("ocdref") + "', which is not in the document");
                }
                out.add(new Pid(pid, factory, bundle, ocd.getAttribute("name"), ocd.getAttribute("description"),
                        attributes(ocd)));
            }
        }
        return out;
    }

    private static List<Attribute> attributes(Element ocd) {
        List<Attribute> out = new ArrayList<>();
        for (Element ad : children(ocd, "AD")) {
            List<Choice> choices = new ArrayList<>();
            for (Element option : children(ad, "Option")) {
                choices.add(new Choice(option.getAttribute("value"), option.getAttribute("label")));
            }
            String cardinality = ad.getAttribute("cardinality");
            out.add(new Attribute(ad.getAttribute("id"), ad.getAttribute("type"), optional(ad, "default"), choices,
                    optional(ad, "min"), optional(ad, "max"), !"false".equals(ad.getAttribute("required")),
                    cardinality.isEmpty() ? 0 : Integer.parseInt(cardinality.trim()), ad.getAttribute("description")));
        }
        out.sort(Comparator.comparing(Attribute::id));
        return out;
    }

    private static String optional(Element e, String attribute) {
        return e.hasAttribute(attribute) ? e.getAttribute(attribute) : null;
    }

    private static List<Element> children(Element parent, String localName) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node node = nodes.item(i);
            if (node instanceof Element element && localName.equals(element.getLocalName() != null
                    ? element.getLocalName() : element.getTagName())) {
                out.add(element);
            }
        }
        return out;
    }
}
