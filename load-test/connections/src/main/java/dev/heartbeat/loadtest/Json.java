package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the load test needs: {@code report.json} and the one-line messages its child
 * processes print. Values are {@code null}, {@link Boolean}, {@link Long}, {@link Double},
 * {@link String}, {@code List<Object>} and {@code Map<String, Object>} (insertion-ordered).
 *
 * <p>A library (Jackson, Gson) would bring a dependency to converge for two hundred lines of plain
 * code; this parser is strict (RFC 8259, one value, nothing after it) and its errors name the offset.
 * Stateless; any thread.
 */
final class Json {

    private Json() {
    }

    /** The value on one line. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder(256);
        write(out, value, -1, 0);
        return out.toString();
    }

    /** The value indented by two spaces per level, for files a person may read. */
    static String writePretty(Object value) {
        StringBuilder out = new StringBuilder(4096);
        write(out, value, 2, 0);
        return out.append('\n').toString();
    }

    private static void write(StringBuilder out, Object v, int indent, int depth) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String) {
            string(out, (String) v);
        } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer || v instanceof Short) {
            out.append(v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                out.append("null"); // JSON has no NaN; absent is the honest reading
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                out.append((long) d);
            } else {
                out.append(d);
            }
        } else if (v instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) v;
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(out, indent, depth + 1);
                string(out, String.valueOf(e.getKey()));
                out.append(indent < 0 ? ":" : ": ");
                write(out, e.getValue(), indent, depth + 1);
            }
            if (!map.isEmpty()) {
                newline(out, indent, depth);
            }
            out.append('}');
        } else if (v instanceof List) {
            List<?> list = (List<?>) v;
            boolean scalars = list.stream().noneMatch(x -> x instanceof Map || x instanceof List);
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(scalars && indent >= 0 ? ", " : ",");
                }
                if (!scalars) {
                    newline(out, indent, depth + 1);
                }
                write(out, list.get(i), indent, depth + 1);
            }
            if (!scalars && !list.isEmpty()) {
                newline(out, indent, depth);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    private static void newline(StringBuilder out, int indent, int depth) {
        if (indent >= 0) {
            out.append('\n');
            for (int i = 0; i < indent * depth; i++) {
                out.append(' ');
            }
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /**
     * Parses one JSON text.
     *
     * @throws IllegalArgumentException naming the offset and what was expected there
     */
    static Object parse(String text) {
        Parser p = new Parser(text);
        p.space();
        Object v = p.value();
        p.space();
        if (p.pos != text.length()) {
            throw p.error("end of input");
        }
        return v;
    }

    /** Parses a JSON object. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> parseObject(String text) {
        Object v = parse(text);
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object: " + abbreviate(text));
        }
        return (Map<String, Object>) v;
    }

    static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String expected) {
            String found = pos >= s.length() ? "the end" : "'" + s.charAt(pos) + "'";
            return new IllegalArgumentException("bad JSON at offset " + pos + ": expected " + expected + ", found "
                    + found + " in " + abbreviate(s));
        }

        void space() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                    return;
                }
                pos++;
            }
        }

        Object value() {
            if (pos >= s.length()) {
                throw error("a value");
            }
            char c = s.charAt(pos);
            switch (c) {
                case '{':
                    return object();
                case '[':
                    return array();
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw error("a value");
            }
        }

        private Object literal(String word, Object v) {
            if (!s.startsWith(word, pos)) {
                throw error(word);
            }
            pos += word.length();
            return v;
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++; // {
            space();
            if (peek('}')) {
                pos++;
                return map;
            }
            while (true) {
                space();
                if (!peek('"')) {
                    throw error("a string key");
                }
                String key = string();
                space();
                expect(':');
                space();
                map.put(key, value());
                space();
                if (peek(',')) {
                    pos++;
                } else if (peek('}')) {
                    pos++;
                    return map;
                } else {
                    throw error("',' or '}'");
                }
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            pos++; // [
            space();
            if (peek(']')) {
                pos++;
                return list;
            }
            while (true) {
                space();
                list.add(value());
                space();
                if (peek(',')) {
                    pos++;
                } else if (peek(']')) {
                    pos++;
                    return list;
                } else {
                    throw error("',' or ']'");
                }
            }
        }

        private String string() {
            pos++; // "
            StringBuilder out = new StringBuilder();
            while (true) {
                if (pos >= s.length()) {
                    throw error("'\"'");
                }
                char c = s.charAt(pos++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    pos--;
                    throw error("no control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (pos >= s.length()) {
                    throw error("an escape");
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case '"':
                    case '\\':
                    case '/':
                        out.append(e);
                        break;
                    case 'b':
                        out.append('\b');
                        break;
                    case 'f':
                        out.append('\f');
                        break;
                    case 'n':
                        out.append('\n');
                        break;
                    case 'r':
                        out.append('\r');
                        break;
                    case 't':
                        out.append('\t');
                        break;
                    case 'u':
                        if (pos + 4 > s.length()) {
                            throw error("four hex digits");
                        }
                        try {
                            out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("four hex digits");
                        }
                        pos += 4;
                        break;
                    default:
                        pos--;
                        throw error("an escape");
                }
            }
        }

        private Object number() {
            int start = pos;
            if (peek('-')) {
                pos++;
            }
            boolean integral = true;
            int digits = digits();
            if (digits == 0) {
                throw error("a digit");
            }
            if (peek('.')) {
                integral = false;
                pos++;
                if (digits() == 0) {
                    throw error("a digit");
                }
            }
            if (peek('e') || peek('E')) {
                integral = false;
                pos++;
                if (peek('+') || peek('-')) {
                    pos++;
                }
                if (digits() == 0) {
                    throw error("a digit");
                }
            }
            String n = s.substring(start, pos);
            if (integral) {
                try {
                    return Long.parseLong(n);
                } catch (NumberFormatException tooLong) {
                    return Double.parseDouble(n);
                }
            }
            return Double.parseDouble(n);
        }

        private int digits() {
            int start = pos;
            while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
                pos++;
            }
            return pos - start;
        }

        private boolean peek(char c) {
            return pos < s.length() && s.charAt(pos) == c;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("'" + c + "'");
            }
            pos++;
        }
    }

    // ---------------------------------------------------------------- typed reads of parsed objects

    static long getLong(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof Number)) {
            throw new IllegalArgumentException("expected a number at '" + key + "': " + v);
        }
        return ((Number) v).longValue();
    }

    static double getDouble(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof Number)) {
            throw new IllegalArgumentException("expected a number at '" + key + "': " + v);
        }
        return ((Number) v).doubleValue();
    }

    static String getString(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof String)) {
            throw new IllegalArgumentException("expected a string at '" + key + "': " + v);
        }
        return (String) v;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> getObject(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("expected an object at '" + key + "': " + v);
        }
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    static List<Object> getList(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof List)) {
            throw new IllegalArgumentException("expected an array at '" + key + "': " + v);
        }
        return (List<Object>) v;
    }
}
