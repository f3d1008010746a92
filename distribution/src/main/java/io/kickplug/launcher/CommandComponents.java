package io.kickplug.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
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
 * The Gogo command components a bundle declares, read from its Declarative Services XML
 * ({@code Service-Component} header). The launcher waits until each has registered its service and Gogo
 * knows its functions before it runs any statement, so a script never races the components' activation.
 *
 * <p>Only components that can activate without outside help count: not disabled ({@code enabled="false"})
 * and not waiting for a configuration ({@code configuration-policy="require"}).
 */
public final class CommandComponents {

    public static final String SCOPE = "osgi.command.scope";
    public static final String FUNCTION = "osgi.command.function";

    /** A component that registers Gogo commands. */
    public record Command(String componentName, String scope, List<String> functions) {
        public Command {
            functions = List.copyOf(functions);
        }
    }

    /** A command component and the class that implements it (its {@code implementation} element). */
    public record Implemented(Command command, String implementation) {
    }

    private CommandComponents() {
    }

    /** The command components of one bundle jar (none when it declares no components). */
    public static List<Command> of(Path bundleJar) throws IOException {
        return implementationsOf(bundleJar).stream().map(Implemented::command).toList();
    }

    /**
     * The command components of one bundle jar with their implementation classes (for the generated command
     * reference, which reads the classes' Gogo annotations).
     */
    public static List<Implemented> implementationsOf(Path bundleJar) throws IOException {
        List<Implemented> commands = new ArrayList<>();
        try (JarFile jar = new JarFile(bundleJar.toFile())) {
            String header = jar.getManifest() == null ? null
                    : jar.getManifest().getMainAttributes().getValue("Service-Component");
            if (header == null) {
                return commands;
            }
            for (String path : header.split(",")) {
                String entryPattern = path.strip();
                int params = entryPattern.indexOf(';');
                if (params >= 0) {
                    entryPattern = entryPattern.substring(0, params).strip();
                }
                for (JarEntry entry : matching(jar, entryPattern)) {
                    try (InputStream in = jar.getInputStream(entry)) {
                        commands.addAll(parseImplemented(in, bundleJar + "!/" + entry.getName()));
                    }
                }
            }
        }
        return commands;
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

    /** Parses one component description document. */
    public static List<Command> parse(InputStream xml, String where) throws IOException {
        return parseImplemented(xml, where).stream().map(Implemented::command).toList();
    }

    private static List<Implemented> parseImplemented(InputStream xml, String where) throws IOException {
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
        List<Implemented> out = new ArrayList<>();
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
                out.add(new Implemented(new Command(name, scope, functions), implementation));
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
