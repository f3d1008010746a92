package io.kickplug.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * What a bundle's Declarative Services XML ({@code Service-Component} header) says that the launcher needs: its
 * Gogo command components, and the service interfaces its components provide and reference. The launcher waits
 * until each command component has registered its service and Gogo knows its functions before it runs any
 * statement, so a script never races the components' activation; and a daemon starts a bundle it would start
 * only after ready before the statements when a used command references a service that bundle provides
 * ({@link LazyStart}).
 *
 * <p>Only components that can activate without outside help count as commands: not disabled
 * ({@code enabled="false"}) and not waiting for a configuration ({@code configuration-policy="require"}). What
 * components provide and reference counts for every component: one that waits for a configuration may be
 * configured by the statements.
 */
public final class CommandComponents {

    public static final String SCOPE = "osgi.command.scope";
    public static final String FUNCTION = "osgi.command.function";

    /** A component that registers Gogo commands, and the service interfaces it references (sorted). */
    public record Command(String componentName, String scope, List<String> functions, List<String> references) {
        public Command {
            functions = List.copyOf(functions);
            references = List.copyOf(new TreeSet<>(references));
        }

        /** A command component that references no service. */
        public Command(String componentName, String scope, List<String> functions) {
            this(componentName, scope, functions, List.of());
        }
    }

    /**
     * What one bundle's component descriptions say: its command components, and the service interfaces its
     * components provide ({@code <service><provide interface>}) and reference ({@code <reference interface>}).
     */
    public record Descriptions(List<Command> commands, Set<String> provides, Set<String> references) {

        /** A bundle without component descriptions. */
        public static final Descriptions NONE = new Descriptions(List.of(), Set.of(), Set.of());

        public Descriptions {
            commands = List.copyOf(commands);
            provides = Collections.unmodifiableSortedSet(new TreeSet<>(provides));
            references = Collections.unmodifiableSortedSet(new TreeSet<>(references));
        }

        /** Both bundles' descriptions (two bundles of one symbolic name). */
        public Descriptions and(Descriptions other) {
            List<Command> c = new ArrayList<>(commands);
            c.addAll(other.commands);
            Set<String> p = new TreeSet<>(provides);
            p.addAll(other.provides);
            Set<String> r = new TreeSet<>(references);
            r.addAll(other.references);
            return new Descriptions(c, p, r);
        }
    }

    /** A command component and the class that implements it (its {@code implementation} element). */
    public record Implemented(Command command, String implementation) {
    }

    private CommandComponents() {
    }

    /** What the component descriptions of one bundle jar say ({@link Descriptions#NONE} when it has none). */
    public static Descriptions of(Path bundleJar) throws IOException {
        return of(bundleJar, new HashMap<>());
    }

    /** {@link #of(Path)}, also putting each command component's implementation class in {@code implementations}. */
    private static Descriptions of(Path bundleJar, Map<String, String> implementations) throws IOException {
        Descriptions all = Descriptions.NONE;
        try (JarFile jar = new JarFile(bundleJar.toFile())) {
            String header = jar.getManifest() == null ? null
                    : jar.getManifest().getMainAttributes().getValue("Service-Component");
            if (header == null) {
                return all;
            }
            for (String path : header.split(",")) {
                String entryPattern = path.strip();
                int params = entryPattern.indexOf(';');
                if (params >= 0) {
                    entryPattern = entryPattern.substring(0, params).strip();
                }
                for (JarEntry entry : matching(jar, entryPattern)) {
                    try (InputStream in = jar.getInputStream(entry)) {
                        all = all.and(parse(in, bundleJar + "!/" + entry.getName(), implementations));
                    }
                }
            }
        }
        return all;
    }

    private static List<JarEntry> matching(JarFile jar, String pattern) {
        List<JarEntry> out = new ArrayList<>();
        if (!pattern.contains("*")) {
            JarEntry entry = jar.getJarEntry(pattern);
            if (entry != null) {
                out.add(entry);
            }
            return out;
        }
        Pattern regex = Pattern.compile(Pattern.quote(pattern).replace("*", "\\E[^/]*\\Q"));
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
            JarEntry entry = e.nextElement();
            if (regex.matcher(entry.getName()).matches()) {
                out.add(entry);
            }
        }
        return out;
    }

    /**
     * The command components of one bundle jar with their implementation classes (for the generated command
     * reference, which reads the classes' Gogo annotations).
     */
    public static List<Implemented> implementationsOf(Path bundleJar) throws IOException {
        Map<String, String> implementations = new HashMap<>();
        Descriptions d = of(bundleJar, implementations);
        return d.commands().stream()
                .map(c -> new Implemented(c, implementations.getOrDefault(c.componentName(), ""))).toList();
    }

    /** Parses one component description document. */
    public static Descriptions parse(InputStream xml, String where) throws IOException {
        return parse(xml, where, new HashMap<>());
    }

    private static Descriptions parse(InputStream xml, String where, Map<String, String> implementations)
            throws IOException {
        Document doc;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            DocumentBuilder builder = factory.newDocumentBuilder();
            doc = builder.parse(xml);
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read component description " + where + ": " + e.getMessage(), e);
        }
        List<Command> out = new ArrayList<>();
        Set<String> provides = new TreeSet<>();
        Set<String> references = new TreeSet<>();
        List<Element> components = new ArrayList<>();
        Element root = doc.getDocumentElement();
        if ("component".equals(localName(root))) {
            components.add(root);
        } else {
            for (Element child : children(root, "component")) {
                components.add(child);
            }
        }
        for (Element component : components) {
            List<String> referenced = interfaces(children(component, "reference"));
            references.addAll(referenced);
            for (Element service : children(component, "service")) {
                provides.addAll(interfaces(children(service, "provide")));
            }
            if ("false".equals(component.getAttribute("enabled"))
                    || "require".equals(component.getAttribute("configuration-policy"))
                    || children(component, "service").isEmpty()) {
                continue;
            }
            String scope = null;
            List<String> functions = new ArrayList<>();
            for (Element property : children(component, "property")) {
                String name = property.getAttribute("name");
                if (SCOPE.equals(name)) {
                    scope = values(property).stream().findFirst().orElse(null);
                } else if (FUNCTION.equals(name)) {
                    functions.addAll(values(property));
                }
            }
            if (scope != null && !functions.isEmpty()) {
                String implementation = children(component, "implementation").stream().findFirst()
                        .map(e -> e.getAttribute("class")).orElse("");
                String name = component.getAttribute("name");
                if (name.isEmpty()) {
                    name = implementation;
                }
                out.add(new Command(name, scope, functions, referenced));
                implementations.put(name, implementation);
            }
        }
        return new Descriptions(out, provides, references);
    }

    /** The non-blank {@code interface} attributes of {@code elements}. */
    private static List<String> interfaces(List<Element> elements) {
        List<String> out = new ArrayList<>();
        for (Element e : elements) {
            String name = e.getAttribute("interface").strip();
            if (!name.isEmpty()) {
                out.add(name);
            }
        }
        return out;
    }

    /** A property's values: the {@code value} attribute, or one per non-blank line of its text. */
    private static List<String> values(Element property) {
        List<String> out = new ArrayList<>();
        if (property.hasAttribute("value")) {
            out.add(property.getAttribute("value").strip());
            return out;
        }
        for (String line : property.getTextContent().split("\\R")) {
            if (!line.isBlank()) {
                out.add(line.strip());
            }
        }
        return out;
    }

    private static List<Element> children(Element parent, String localName) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node node = nodes.item(i);
            if (node instanceof Element element && localName.equals(localName(element))) {
                out.add(element);
            }
        }
        return out;
    }

    private static String localName(Element element) {
        return element.getLocalName() != null ? element.getLocalName() : element.getTagName();
    }
}
