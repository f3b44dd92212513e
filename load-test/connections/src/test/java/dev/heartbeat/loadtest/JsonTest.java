package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void roundTripsEveryKindOfValue() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("long", Long.MIN_VALUE);
        m.put("double", 1.5e-3);
        m.put("whole double", 3.0);
        m.put("string", "quote \" backslash \\ newline \n tab \t control \u0001 unicode é");
        m.put("true", true);
        m.put("null", null);
        List<Object> list = new ArrayList<>();
        list.add(1L);
        list.add(new LinkedHashMap<String, Object>());
        list.add(new ArrayList<Object>());
        m.put("list", list);
        for (String text : new String[] {Json.write(m), Json.writePretty(m)}) {
            Map<String, Object> back = Json.parseObject(text);
            assertEquals(Long.MIN_VALUE, back.get("long"));
            assertEquals(1.5e-3, back.get("double"));
            assertEquals(3L, back.get("whole double"), "a whole double is written without a fraction");
            assertEquals(m.get("string"), back.get("string"));
            assertEquals(Boolean.TRUE, back.get("true"));
            assertTrue(back.containsKey("null"));
            assertNull(back.get("null"));
            assertEquals(list.toString(), back.get("list").toString());
            assertEquals(List.copyOf(m.keySet()), List.copyOf(back.keySet()), "insertion order is kept");
        }
    }

    @Test
    void nanIsWrittenAsNull() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("x", Double.NaN);
        assertEquals("{\"x\":null}", Json.write(m));
    }

    @Test
    void errorsNameTheOffset() {
        assertError("bad JSON at offset 6: expected a value", "{\"a\": }");
        assertError("bad JSON at offset 9: expected end of input", "{\"a\": 1} x");
        assertError("expected ',' or '}'", "{\"a\": 1 \"b\": 2}");
        assertError("expected a digit", "[1.]");
        assertError("expected an escape", "[\"\\x\"]");
        assertError("expected '\"'", "[\"abc");
        assertThrows(IllegalArgumentException.class, () -> Json.parseObject("[1]"));
    }

    private static void assertError(String expected, String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.parse(text));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void typedReadsNameTheKey() {
        Map<String, Object> m = Json.parseObject("{\"n\": \"x\"}");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.getLong(m, "n"));
        assertTrue(e.getMessage().contains("'n'"), e.getMessage());
    }
}
