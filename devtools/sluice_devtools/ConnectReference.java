/*
 * Sluice's reference harness: Apache Kafka Connect's own converters, transformations and
 * predicates behind a JSON-lines protocol on stdin/stdout. Compiled and started by
 * sluice_devtools.kafka_reference (see its module docstring for the protocol).
 *
 * One request per input line, one response per output line, in order. Every failure,
 * including one in a request it cannot parse, is answered with {"ok": false, "error": ...};
 * the process ends only at the end of its input.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class ConnectReference {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final int MAX_CACHED = 256;

    /** The neutral codec: Kafka's JsonConverter envelope, nothing replaced, decimals as base64. */
    private final JsonConverter neutral = new JsonConverter();
    /** The same with decimals as numbers: for a BigDecimal whose scale is not its schema's. */
    private final JsonConverter neutralNumeric = new JsonConverter();

    private final Map<String, Converter> converters = new HashMap<>();
    private final Map<String, HeaderConverter> headerConverters = new HashMap<>();
    private final Map<String, Transformation<?>> transformations = new HashMap<>();
    private final Map<String, Predicate<?>> predicates = new HashMap<>();

    private ConnectReference() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("schemas.enable", "true");
        conf.put("replace.null.with.default", "false");
        conf.put("decimal.format", "BASE64");
        neutral.configure(conf, false);
        conf.put("decimal.format", "NUMERIC");
        neutralNumeric.configure(conf, false);
    }

    public static void main(String[] args) throws Exception {
        // The protocol owns the real stdout; anything else printing to System.out (a logger's
        // console appender, a stray println) goes to stderr instead.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ConnectReference harness = new ConnectReference();

        ObjectNode ready = NODES.objectNode();
        ready.put("ready", true);
        ready.put("version", AppInfoParser.getVersion());
        ready.put("java", System.getProperty("java.version"));
        protocol.println(MAPPER.writeValueAsString(ready));
        protocol.flush();

        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            protocol.println(harness.handleLine(line));
            protocol.flush();
        }
        harness.closeAll();
    }

    // ------------------------------------------------------------------------- dispatch

    private String handleLine(String line) {
        JsonNode id = NullNode.getInstance();
        ObjectNode response;
        try {
            JsonNode request = MAPPER.readTree(line);
            if (request == null || !request.isObject()) {
                throw new IllegalArgumentException("A request must be a JSON object");
            }
            id = request.path("id");
            response = handle(request);
            response.put("ok", true);
        } catch (Throwable t) {
            response = NODES.objectNode();
            response.put("ok", false);
            response.set("error", describe(t));
        }
        ObjectNode out = NODES.objectNode();
        out.set("id", id.isMissingNode() ? NullNode.getInstance() : id);
        out.setAll(response);
        try {
            return MAPPER.writeValueAsString(out);
        } catch (Throwable t) {
            ObjectNode failed = NODES.objectNode();
            failed.set("id", out.get("id"));
            failed.put("ok", false);
            failed.set("error", describe(t));
            try {
                return MAPPER.writeValueAsString(failed);
            } catch (Throwable again) {
                return "{\"ok\":false,\"error\":{\"class\":\"java.lang.Error\",\"message\":\"response not serialisable\"}}";
            }
        }
    }

    private ObjectNode handle(JsonNode request) throws Exception {
        String op = text(request, "op");
        ObjectNode out = NODES.objectNode();
        switch (op) {
            case "ping": {
                out.put("version", AppInfoParser.getVersion());
                out.put("java", System.getProperty("java.version"));
                return out;
            }
            case "echo": {
                out.set("data", encodeData(decodeData(request.get("data"))));
                return out;
            }
            case "fromConnect": {
                Converter converter = converter(request);
                SchemaAndValue data = decodeData(request.get("data"));
                byte[] bytes = converter.fromConnectData(topic(request), data.schema(), data.value());
                out.set("bytes", bytesNode(bytes));
                return out;
            }
            case "toConnect": {
                Converter converter = converter(request);
                SchemaAndValue result = converter.toConnectData(topic(request), bytes(request.get("bytes")));
                out.set("data", encodeData(result));
                return out;
            }
            case "fromConnectHeader": {
                HeaderConverter converter = headerConverter(request);
                SchemaAndValue data = decodeData(request.get("data"));
                byte[] bytes = converter.fromConnectHeader(topic(request), headerKey(request), data.schema(), data.value());
                out.set("bytes", bytesNode(bytes));
                return out;
            }
            case "toConnectHeader": {
                HeaderConverter converter = headerConverter(request);
                SchemaAndValue result = converter.toConnectHeader(topic(request), headerKey(request), bytes(request.get("bytes")));
                out.set("data", encodeData(result));
                return out;
            }
            case "transform": {
                ConnectRecord<?> result = applyTransformation(transformation(request), decodeRecord(request));
                out.set("record", result == null ? NullNode.getInstance() : encodeRecord(result));
                return out;
            }
            case "predicate": {
                out.put("result", testPredicate(predicate(request), decodeRecord(request)));
                return out;
            }
            default:
                throw new IllegalArgumentException("Unknown op: " + op);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ConnectRecord<?> applyTransformation(Transformation transformation, ConnectRecord<?> record) {
        return (ConnectRecord<?>) transformation.apply((ConnectRecord) record);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static boolean testPredicate(Predicate predicate, ConnectRecord<?> record) {
        return predicate.test((ConnectRecord) record);
    }

    // ---------------------------------------------------------------------- instances

    private static String text(JsonNode request, String field) {
        JsonNode node = request.get(field);
        if (node == null || !node.isTextual()) {
            throw new IllegalArgumentException("Field '" + field + "' must be a string");
        }
        return node.asText();
    }

    private static String topic(JsonNode request) {
        JsonNode node = request.get("topic");
        return node == null || node.isNull() ? "topic" : node.asText();
    }

    private static String headerKey(JsonNode request) {
        JsonNode node = request.get("headerKey");
        return node == null || node.isNull() ? "header" : node.asText();
    }

    /** Plugin configs: every value as a string (what a properties file gives ConfigDef), or null. */
    private static Map<String, Object> configs(JsonNode request) {
        Map<String, Object> configs = new LinkedHashMap<>();
        JsonNode node = request.get("configs");
        if (node == null || node.isNull()) {
            return configs;
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("Field 'configs' must be an object");
        }
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> entry = fields.next();
            JsonNode value = entry.getValue();
            if (value.isNull()) {
                configs.put(entry.getKey(), null);
            } else if (value.isArray()) {
                List<String> items = new ArrayList<>();
                value.forEach(item -> items.add(item.asText()));
                configs.put(entry.getKey(), String.join(",", items));
            } else {
                configs.put(entry.getKey(), value.asText());
            }
        }
        return configs;
    }

    private static String cacheKey(String kind, String className, Map<String, Object> configs) throws Exception {
        return kind + "\u0000" + className + "\u0000" + MAPPER.writeValueAsString(configs);
    }

    private static Object instantiate(String className) throws Exception {
        Class<?> cls = Class.forName(className, true, ConnectReference.class.getClassLoader());
        return cls.getDeclaredConstructor().newInstance();
    }

    private static <T> void remember(Map<String, T> cache, String key, T value) {
        if (cache.size() >= MAX_CACHED) {
            cache.clear();
        }
        cache.put(key, value);
    }

    private Converter converter(JsonNode request) throws Exception {
        String className = text(request, "converter");
        boolean isKey = request.path("isKey").asBoolean(false);
        Map<String, Object> configs = configs(request);
        String key = cacheKey(isKey ? "key" : "value", className, configs);
        Converter converter = converters.get(key);
        if (converter == null) {
            Object instance = instantiate(className);
            if (!(instance instanceof Converter)) {
                throw new IllegalArgumentException(className + " is not a Converter");
            }
            converter = (Converter) instance;
            converter.configure(configs, isKey);
            remember(converters, key, converter);
        }
        return converter;
    }

    private HeaderConverter headerConverter(JsonNode request) throws Exception {
        String className = text(request, "converter");
        Map<String, Object> configs = configs(request);
        String key = cacheKey("header", className, configs);
        HeaderConverter converter = headerConverters.get(key);
        if (converter == null) {
            Object instance = instantiate(className);
            if (!(instance instanceof HeaderConverter)) {
                throw new IllegalArgumentException(className + " is not a HeaderConverter");
            }
            converter = (HeaderConverter) instance;
            // As the worker does for header converters (Plugins.newHeaderConverter).
            Map<String, Object> withType = new HashMap<>(configs);
            withType.putIfAbsent("converter.type", "header");
            converter.configure(withType);
            remember(headerConverters, key, converter);
        }
        return converter;
    }

    private Transformation<?> transformation(JsonNode request) throws Exception {
        String className = text(request, "transformation");
        Map<String, Object> configs = configs(request);
        String key = cacheKey("transformation", className, configs);
        Transformation<?> transformation = transformations.get(key);
        if (transformation == null) {
            Object instance = instantiate(className);
            if (!(instance instanceof Transformation)) {
                throw new IllegalArgumentException(className + " is not a Transformation");
            }
            transformation = (Transformation<?>) instance;
            transformation.configure(configs);
            remember(transformations, key, transformation);
        }
        return transformation;
    }

    private Predicate<?> predicate(JsonNode request) throws Exception {
        String className = text(request, "predicate");
        Map<String, Object> configs = configs(request);
        String key = cacheKey("predicate", className, configs);
        Predicate<?> predicate = predicates.get(key);
        if (predicate == null) {
            Object instance = instantiate(className);
            if (!(instance instanceof Predicate)) {
                throw new IllegalArgumentException(className + " is not a Predicate");
            }
            predicate = (Predicate<?>) instance;
            predicate.configure(configs);
            remember(predicates, key, predicate);
        }
        return predicate;
    }

    private void closeAll() {
        for (Converter c : converters.values()) {
            quietly(c::close);
        }
        for (HeaderConverter c : headerConverters.values()) {
            quietly(c::close);
        }
        for (Transformation<?> t : transformations.values()) {
            quietly(t::close);
        }
        for (Predicate<?> p : predicates.values()) {
            quietly(p::close);
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    private static void quietly(Action action) {
        try {
            action.run();
        } catch (Throwable ignored) {
            // closing at exit: nothing to report to
        }
    }

    // ------------------------------------------------------------------------- bytes

    private static byte[] bytes(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isTextual()) {
            throw new IllegalArgumentException("Field 'bytes' must be base64 text or null");
        }
        return Base64.getDecoder().decode(node.asText());
    }

    private static JsonNode bytesNode(byte[] bytes) {
        return bytes == null ? NullNode.getInstance() : NODES.textNode(Base64.getEncoder().encodeToString(bytes));
    }

    // ---------------------------------------------------------------- neutral data codec

    /** {"schema": .., "payload": .., "hints": {pointer: hint}} to a Connect schema and value. */
    private SchemaAndValue decodeData(JsonNode data) throws Exception {
        if (data == null || data.isNull()) {
            return new SchemaAndValue(null, null);
        }
        if (!data.isObject()) {
            throw new IllegalArgumentException("Connect data must be an object with 'schema' and 'payload'");
        }
        if (data.path("schemaless").asBoolean(false)) {
            ObjectNode bare = data.deepCopy();
            bare.remove("schemaless");
            bare.set("schema", NullNode.getInstance());
            return new SchemaAndValue(lenientSchema(data.get("schema")), decodeData(bare).value());
        }
        ObjectNode envelope = NODES.objectNode();
        JsonNode schemaNode = data.get("schema");
        JsonNode payload = data.get("payload");
        envelope.set("schema", schemaNode == null ? NullNode.getInstance() : schemaNode);
        envelope.set("payload", payload == null ? NullNode.getInstance() : payload);
        if ((payload == null || payload.isNull()) && schemaNode != null && !schemaNode.isNull()) {
            // A null value, whatever the schema says (JsonConverter would refuse a required one).
            return new SchemaAndValue(neutral.asConnectSchema(schemaNode), null);
        }
        SchemaAndValue decoded = neutral.toConnectData("", MAPPER.writeValueAsBytes(envelope));
        JsonNode hints = data.get("hints");
        Object value = normalize(decoded.schema(), decoded.value(), envelope.get("payload"), "", hints);
        return new SchemaAndValue(decoded.schema(), value);
    }

    /** A value for {@code schema} from one JSON node, through the neutral codec. */
    private Object leaf(Schema schema, JsonNode node, String pointer, JsonNode hints) throws Exception {
        ObjectNode envelope = NODES.objectNode();
        envelope.set("schema", schema == null ? NullNode.getInstance() : neutral.asJsonSchema(schema));
        envelope.set("payload", node == null ? NullNode.getInstance() : node);
        SchemaAndValue decoded = neutral.toConnectData("", MAPPER.writeValueAsBytes(envelope));
        return normalize(schema, decoded.value(), node, pointer, hints);
    }

    /**
     * What JsonConverter cannot carry: map order (it builds HashMaps; rebuilt here as
     * LinkedHashMaps in the JSON's order), NaN and infinities (written as strings "NaN",
     * "Infinity", "-Infinity"), and for schemaless values the hinted types ("bytes",
     * "float64", "map" for a map with non-string keys written as [[k, v], ...]).
     */
    private Object normalize(Schema schema, Object value, JsonNode node, String pointer, JsonNode hints) throws Exception {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return value;
        }
        if (schema == null) {
            JsonNode hintNode = hints == null ? null : hints.get(pointer);
            String hint = hintNode == null ? null : hintNode.asText();
            if ("bytes".equals(hint)) {
                return Base64.getDecoder().decode(node.asText());
            }
            if ("float64".equals(hint)) {
                return node.isTextual() ? special(node.asText()) : node.doubleValue();
            }
            if (node.isFloatingPointNumber() && value instanceof Double) {
                return node.doubleValue();
            }
            if ("map".equals(hint) && node.isArray()) {
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < node.size(); i++) {
                    JsonNode pair = node.get(i);
                    String base = pointer + "/" + i;
                    map.put(leaf(null, pair.get(0), base + "/0", hints), leaf(null, pair.get(1), base + "/1", hints));
                }
                return map;
            }
            if (node.isObject() && value instanceof Map) {
                Map<?, ?> source = (Map<?, ?>) value;
                Map<Object, Object> map = new LinkedHashMap<>();
                Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    String key = field.getKey();
                    map.put(key, normalize(null, source.get(key), field.getValue(), pointer + "/" + escape(key), hints));
                }
                return map;
            }
            if (node.isArray() && value instanceof List) {
                List<?> source = (List<?>) value;
                List<Object> list = new ArrayList<>(source.size());
                for (int i = 0; i < source.size(); i++) {
                    list.add(normalize(null, source.get(i), node.get(i), pointer + "/" + i, hints));
                }
                return list;
            }
            return value;
        }
        switch (schema.type()) {
            case FLOAT32:
            case FLOAT64: {
                // JsonConverter reads numbers as BigDecimal, which has no -0.0; this
                // harness's own parser reads them as doubles.
                double d;
                if (node.isTextual()) {
                    d = special(node.asText());
                } else if (node.isNumber()) {
                    d = node.doubleValue();
                } else {
                    return value;
                }
                return schema.type() == Schema.Type.FLOAT32 ? (Object) (float) d : (Object) d;
            }
            case ARRAY: {
                if (!(value instanceof List) || !node.isArray()) {
                    return value;
                }
                List<?> source = (List<?>) value;
                List<Object> list = new ArrayList<>(source.size());
                for (int i = 0; i < source.size(); i++) {
                    list.add(normalize(schema.valueSchema(), source.get(i), node.get(i), pointer + "/" + i, hints));
                }
                return list;
            }
            case MAP: {
                if (!(value instanceof Map)) {
                    return value;
                }
                Map<?, ?> source = (Map<?, ?>) value;
                Map<Object, Object> map = new LinkedHashMap<>();
                if (node.isObject()) {
                    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
                    while (fields.hasNext()) {
                        Map.Entry<String, JsonNode> field = fields.next();
                        String key = field.getKey();
                        map.put(key, normalize(schema.valueSchema(), source.get(key), field.getValue(),
                            pointer + "/" + escape(key), hints));
                    }
                } else if (node.isArray()) {
                    for (int i = 0; i < node.size(); i++) {
                        JsonNode pair = node.get(i);
                        String base = pointer + "/" + i;
                        map.put(leaf(schema.keySchema(), pair.get(0), base + "/0", hints),
                            leaf(schema.valueSchema(), pair.get(1), base + "/1", hints));
                    }
                } else {
                    return value;
                }
                return map;
            }
            case STRUCT: {
                if (!(value instanceof Struct) || !node.isObject()) {
                    return value;
                }
                Struct struct = (Struct) value;
                for (Field field : schema.fields()) {
                    Object fieldValue = struct.getWithoutDefault(field.name());
                    Object normalized = normalize(field.schema(), fieldValue, node.get(field.name()),
                        pointer + "/" + escape(field.name()), hints);
                    if (normalized != fieldValue) {
                        struct.put(field, normalized);
                    }
                }
                return struct;
            }
            default:
                return value;
        }
    }

    private static double special(String text) {
        switch (text) {
            case "NaN":
                return Double.NaN;
            case "Infinity":
                return Double.POSITIVE_INFINITY;
            case "-Infinity":
                return Double.NEGATIVE_INFINITY;
            default:
                return Double.parseDouble(text);
        }
    }

    private static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }

    /** A Connect schema and value to the neutral form (hints only for schemaless values). */
    private JsonNode encodeData(SchemaAndValue data) throws Exception {
        Schema schema = data == null ? null : data.schema();
        Object value = data == null ? null : data.value();
        if (value == null && schema != null) {
            ObjectNode out = NODES.objectNode();
            out.set("schema", neutral.asJsonSchema(schema));
            out.set("payload", NullNode.getInstance());
            return out;
        }
        if (schema != null && hasNullParts(schema)) {
            // Values.parseString builds arrays and maps without element/key/value schemas
            // (SchemaBuilder.arrayOfNull(), mapOfNull()), which JsonConverter cannot write:
            // send the value schemaless and the schema beside it.
            ObjectNode out = (ObjectNode) encodeData(new SchemaAndValue(null, value));
            out.set("schema", neutral.asJsonSchema(schema));
            out.put("schemaless", true);
            return out;
        }
        byte[] bytes;
        try {
            bytes = neutral.fromConnectData("", schema, value);
        } catch (org.apache.kafka.connect.errors.DataException e) {
            // Kafka's own converters can return a decimal whose scale differs from its
            // schema's (JsonConverter reading a NUMERIC decimal); base64 cannot carry it.
            bytes = neutralNumeric.fromConnectData("", schema, value);
        }
        ObjectNode out;
        if (bytes == null) {
            out = NODES.objectNode();
            out.set("schema", NullNode.getInstance());
            out.set("payload", NullNode.getInstance());
        } else {
            out = (ObjectNode) MAPPER.readTree(bytes);
        }
        if (schema == null && value != null) {
            ObjectNode hints = NODES.objectNode();
            collectHints(value, "", hints);
            if (hints.size() > 0) {
                out.set("hints", hints);
            }
        }
        return out;
    }

    private static boolean hasNullParts(Schema schema) {
        switch (schema.type()) {
            case ARRAY:
                return schema.valueSchema() == null || hasNullParts(schema.valueSchema());
            case MAP:
                return schema.keySchema() == null || schema.valueSchema() == null
                    || hasNullParts(schema.keySchema()) || hasNullParts(schema.valueSchema());
            case STRUCT:
                for (Field field : schema.fields()) {
                    if (hasNullParts(field.schema())) {
                        return true;
                    }
                }
                return false;
            default:
                return false;
        }
    }

    /** asConnectSchema, also for array/map schemas whose parts are null. */
    private Schema lenientSchema(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        String type = node.path("type").asText();
        if (!"array".equals(type) && !"map".equals(type)) {
            return neutral.asConnectSchema(node);
        }
        Schema keys = "map".equals(type) ? lenientSchema(node.get("keys")) : null;
        Schema values = lenientSchema("map".equals(type) ? node.get("values") : node.get("items"));
        Map<String, String> parameters = null;
        if (node.hasNonNull("parameters")) {
            parameters = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = node.get("parameters").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                parameters.put(e.getKey(), e.getValue().asText());
            }
        }
        return new org.apache.kafka.connect.data.ConnectSchema(
            "map".equals(type) ? Schema.Type.MAP : Schema.Type.ARRAY,
            node.path("optional").asBoolean(false), null,
            node.hasNonNull("name") ? node.get("name").asText() : null,
            node.hasNonNull("version") ? node.get("version").asInt() : null,
            node.hasNonNull("doc") ? node.get("doc").asText() : null,
            parameters, null, keys, values);
    }

    private static void collectHints(Object value, String pointer, ObjectNode hints) {
        if (value instanceof byte[] || value instanceof ByteBuffer) {
            hints.put(pointer, "bytes");
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                hints.put(pointer, "float64");
            }
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            for (int i = 0; i < list.size(); i++) {
                collectHints(list.get(i), pointer + "/" + i, hints);
            }
        } else if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            boolean stringKeys = true;
            for (Object key : map.keySet()) {
                if (!(key instanceof String)) {
                    stringKeys = false;
                    break;
                }
            }
            if (stringKeys) {
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    collectHints(entry.getValue(), pointer + "/" + escape((String) entry.getKey()), hints);
                }
            } else {
                hints.put(pointer, "map");
                int i = 0;
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    collectHints(entry.getKey(), pointer + "/" + i + "/0", hints);
                    collectHints(entry.getValue(), pointer + "/" + i + "/1", hints);
                    i++;
                }
            }
        }
    }

    // ------------------------------------------------------------------------ records

    private ConnectRecord<?> decodeRecord(JsonNode request) throws Exception {
        JsonNode record = request.get("record");
        if (record == null || !record.isObject()) {
            throw new IllegalArgumentException("Field 'record' must be an object");
        }
        String kind = request.path("kind").asText(record.path("kind").asText("sink"));
        String topic = record.path("topic").asText(null);
        JsonNode partitionNode = record.get("kafkaPartition");
        Integer partition = partitionNode == null || partitionNode.isNull() ? null : partitionNode.asInt();
        SchemaAndValue key = decodeData(record.get("key"));
        SchemaAndValue value = decodeData(record.get("value"));
        JsonNode timestampNode = record.get("timestamp");
        Long timestamp = timestampNode == null || timestampNode.isNull() ? null : timestampNode.asLong();
        ConnectHeaders headers = new ConnectHeaders();
        JsonNode headersNode = record.get("headers");
        if (headersNode != null && headersNode.isArray()) {
            for (JsonNode header : headersNode) {
                headers.add(header.path("key").asText(), decodeData(header.get("value")));
            }
        }
        if ("source".equals(kind)) {
            return new SourceRecord(
                jsonMap(record.get("sourcePartition")), jsonMap(record.get("sourceOffset")),
                topic, partition, key.schema(), key.value(), value.schema(), value.value(), timestamp, headers);
        }
        if (!"sink".equals(kind)) {
            throw new IllegalArgumentException("Record kind must be 'source' or 'sink', not " + kind);
        }
        long offset = record.path("kafkaOffset").asLong(0L);
        TimestampType timestampType = TimestampType.forName(record.path("timestampType").asText("NoTimestampType"));
        JsonNode originalTopic = record.get("originalTopic");
        JsonNode originalPartition = record.get("originalKafkaPartition");
        JsonNode originalOffset = record.get("originalKafkaOffset");
        return new SinkRecord(topic, partition == null ? 0 : partition, key.schema(), key.value(),
            value.schema(), value.value(), offset, timestamp, timestampType, headers,
            originalTopic == null || originalTopic.isNull() ? topic : originalTopic.asText(),
            originalPartition == null || originalPartition.isNull() ? partition : Integer.valueOf(originalPartition.asInt()),
            originalOffset == null || originalOffset.isNull() ? offset : originalOffset.asLong());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> jsonMap(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        return MAPPER.convertValue(node, LinkedHashMap.class);
    }

    private ObjectNode encodeRecord(ConnectRecord<?> record) throws Exception {
        ObjectNode out = NODES.objectNode();
        out.put("kind", record instanceof SourceRecord ? "source" : "sink");
        out.put("topic", record.topic());
        if (record.kafkaPartition() == null) {
            out.putNull("kafkaPartition");
        } else {
            out.put("kafkaPartition", record.kafkaPartition());
        }
        out.set("key", encodeData(new SchemaAndValue(record.keySchema(), record.key())));
        out.set("value", encodeData(new SchemaAndValue(record.valueSchema(), record.value())));
        if (record.timestamp() == null) {
            out.putNull("timestamp");
        } else {
            out.put("timestamp", record.timestamp());
        }
        ArrayNode headers = out.putArray("headers");
        for (Header header : record.headers()) {
            ObjectNode h = headers.addObject();
            h.put("key", header.key());
            h.set("value", encodeData(new SchemaAndValue(header.schema(), header.value())));
        }
        if (record instanceof SourceRecord) {
            SourceRecord source = (SourceRecord) record;
            out.set("sourcePartition", MAPPER.valueToTree(source.sourcePartition()));
            out.set("sourceOffset", MAPPER.valueToTree(source.sourceOffset()));
        } else if (record instanceof SinkRecord) {
            SinkRecord sink = (SinkRecord) record;
            out.put("kafkaOffset", sink.kafkaOffset());
            out.put("timestampType", sink.timestampType() == null ? null : sink.timestampType().name);
            out.put("originalTopic", sink.originalTopic());
            if (sink.originalKafkaPartition() == null) {
                out.putNull("originalKafkaPartition");
            } else {
                out.put("originalKafkaPartition", sink.originalKafkaPartition());
            }
            out.put("originalKafkaOffset", sink.originalKafkaOffset());
        }
        return out;
    }

    // ------------------------------------------------------------------------- errors

    private static ObjectNode describe(Throwable t) {
        ObjectNode error = NODES.objectNode();
        error.put("class", t.getClass().getName());
        error.put("message", t.getMessage());
        ArrayNode causes = error.putArray("causes");
        Throwable cause = t.getCause();
        for (int depth = 0; cause != null && cause != t && depth < 20; depth++) {
            ObjectNode c = causes.addObject();
            c.put("class", cause.getClass().getName());
            c.put("message", cause.getMessage());
            cause = cause.getCause();
        }
        StringWriter trace = new StringWriter();
        t.printStackTrace(new PrintWriter(trace));
        String text = trace.toString();
        error.put("stacktrace", text.length() > 8000 ? text.substring(0, 8000) : text);
        return error;
    }
}
