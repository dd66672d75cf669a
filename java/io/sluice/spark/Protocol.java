package io.sluice.spark;

import java.util.List;
import java.util.Map;

/**
 * The JVM-planner protocol's names: every method and message key the Java classes use.
 *
 * <p>Generated from the dataclasses of sluice/protocol by {@code python -m tools.protocol_schema}:
 * do not edit (tests/unit/test_protocol.py fails when this file is stale).
 */
final class Protocol {
  private Protocol() {}

  /** The planner's methods ({@code Planner.call(method, request)}). */
  static final class Method {
    private Method() {}

    static final String AGGREGATE = "aggregate";
    static final String ALTER_TABLE = "alter_table";
    static final String CAN_DELETE = "can_delete";
    static final String CREATE_NAMESPACE = "create_namespace";
    static final String CREATE_TABLE = "create_table";
    static final String CREATE_TAG = "create_tag";
    static final String DELETE = "delete";
    static final String DESCRIBE = "describe";
    static final String DROP_TABLE = "drop_table";
    static final String DROP_TAG = "drop_tag";
    static final String EXPLAIN_WRITE = "explain_write";
    static final String FETCH = "fetch";
    static final String FILTERS = "filters";
    static final String JOIN = "join";
    static final String NAMESPACES = "namespaces";
    static final String PLAN = "plan";
    static final String READ = "read";
    static final String READER_SOURCE = "reader_source";
    static final String TABLES = "tables";
    static final String WRITE = "write";
  }

  /** The keys of the requests and answers (sluice/protocol/schema.json). */
  static final class Key {
    private Key() {}

    static final String AGGREGATES = "aggregates";
    static final String AGGREGATES_PUSHED = "aggregates_pushed";
    static final String AGGREGATION = "aggregation";
    static final String AGGREGATION_OFFERED = "aggregation_offered";
    static final String ALIAS = "alias";
    static final String ANSI = "ansi";
    static final String BINARY_AS_BYTES = "binary_as_bytes";
    static final String BYTES = "bytes";
    static final String CATALOG = "catalog";
    static final String CHANGED = "changed";
    static final String CHANGES = "changes";
    static final String COLUMNS = "columns";
    static final String COMMAND = "command";
    static final String COMPLETE = "complete";
    static final String CONDITION = "condition";
    static final String COPY_ON_WRITE = "copy_on_write";
    static final String CREATED = "created";
    static final String DATA_SOURCE = "data_source";
    static final String DESCRIPTION = "description";
    static final String DONE = "done";
    static final String DROPPED = "dropped";
    static final String ERROR = "error";
    static final String FILES = "files";
    static final String HANDLE = "handle";
    static final String IPC = "ipc";
    static final String JOIN = "join";
    static final String JOIN_REFUSED = "join_refused";
    static final String JOIN_TYPE = "join_type";
    static final String JOIN_VERDICTS = "join_verdicts";
    static final String KIND = "kind";
    static final String LAKE_READER = "lake_reader";
    static final String LAKE_VECTORISED_FRACTION = "lake_vectorised_fraction";
    static final String LEFT = "left";
    static final String LIMIT = "limit";
    static final String LIMIT_NOTE = "limit_note";
    static final String MAX_BATCH_ROWS = "max_batch_rows";
    static final String MESSAGE = "message";
    static final String METADATA = "metadata";
    static final String METRICS_DIR = "metrics_dir";
    static final String MODE = "mode";
    static final String NAME = "name";
    static final String NAMESPACE = "namespace";
    static final String NAMESPACES = "namespaces";
    static final String NOT_PUSHED = "not_pushed";
    static final String NOTE = "note";
    static final String OPTIONS = "options";
    static final String ORDER = "order";
    static final String PARALLELISM = "parallelism";
    static final String PARTITION = "partition";
    static final String PARTITIONING = "partitioning";
    static final String PARTITIONS = "partitions";
    static final String PATH = "path";
    static final String PREDICATES = "predicates";
    static final String PROPERTIES = "properties";
    static final String PUSHDOWN = "pushdown";
    static final String PUSHED = "pushed";
    static final String PYTHON_VERSION = "python_version";
    static final String READ_INFO = "read_info";
    static final String READ_SCHEMA = "read_schema";
    static final String READER = "reader";
    static final String READER_REASON = "reader_reason";
    static final String REASON = "reason";
    static final String REASONS = "reasons";
    static final String REMOTE_QUERY = "remote_query";
    static final String REMOVED_FILES = "removed_files";
    static final String REWRITTEN_FILES = "rewritten_files";
    static final String RIGHT = "right";
    static final String ROW_ID = "row_id";
    static final String ROW_LEVEL_REFUSED = "row_level_refused";
    static final String ROWS = "rows";
    static final String RULE = "rule";
    static final String RUNTIME = "runtime";
    static final String RUNTIME_COLUMNS = "runtime_columns";
    static final String SAME_SOURCE = "same_source";
    static final String SCAN = "scan";
    static final String SCAN_ID = "scan_id";
    static final String SCHEMA = "schema";
    static final String SELECTIVE = "selective";
    static final String SELECTIVE_EXACT = "selective_exact";
    static final String SESSION_ZONE = "session_zone";
    static final String SMALL = "small";
    static final String SMALL_READ_ROWS = "small_read_rows";
    static final String SMALL_ROWS = "small_rows";
    static final String SNAPSHOT_ID = "snapshot_id";
    static final String SOURCE = "source";
    static final String SOURCE_URL = "source_url";
    static final String STATEMENTS = "statements";
    static final String TABLE = "table";
    static final String TABLES = "tables";
    static final String TAG = "tag";
    static final String TEXT = "text";
    static final String TIMESTAMP = "timestamp";
    static final String TOO_LARGE = "too_large";
    static final String TRACE = "trace";
    static final String VECTOR = "vector";
    static final String VERDICTS = "verdicts";
    static final String VERSION = "version";
    static final String WRITTEN_FILES = "written_files";
  }

  /** Per method, the keys its answer always has: Bridge checks them before any class reads the answer. */
  static final Map<String, List<String>> REQUIRED_ANSWER_KEYS = Map.ofEntries(
      Map.entry(Method.AGGREGATE, List.of(Key.COMPLETE, Key.VERDICTS, Key.NOTE)),
      Map.entry(Method.ALTER_TABLE, List.of(Key.DONE)),
      Map.entry(Method.CAN_DELETE, List.of(Key.PUSHED)),
      Map.entry(Method.CREATE_NAMESPACE, List.of(Key.CREATED)),
      Map.entry(Method.CREATE_TABLE, List.of(Key.CREATED)),
      Map.entry(Method.CREATE_TAG, List.of(Key.TABLE, Key.TAG, Key.SNAPSHOT_ID)),
      Map.entry(Method.DELETE, List.of(Key.SNAPSHOT_ID, Key.REMOVED_FILES, Key.REWRITTEN_FILES, Key.WRITTEN_FILES, Key.ROWS)),
      Map.entry(Method.DESCRIBE, List.of(Key.NAME, Key.SCHEMA, Key.HANDLE, Key.PARTITIONING)),
      Map.entry(Method.DROP_TABLE, List.of(Key.DROPPED)),
      Map.entry(Method.DROP_TAG, List.of(Key.TABLE, Key.TAG, Key.SNAPSHOT_ID)),
      Map.entry(Method.EXPLAIN_WRITE, List.of(Key.PATH, Key.STATEMENTS, Key.REASONS, Key.DESCRIPTION)),
      Map.entry(Method.FETCH, List.of()),
      Map.entry(Method.FILTERS, List.of(Key.VERDICTS, Key.SELECTIVE)),
      Map.entry(Method.JOIN, List.of(Key.PUSHED, Key.VERDICTS, Key.NOTE)),
      Map.entry(Method.NAMESPACES, List.of(Key.NAMESPACES)),
      Map.entry(Method.PLAN, List.of(Key.SCAN, Key.SCAN_ID, Key.COLUMNS, Key.TABLE, Key.READ_SCHEMA, Key.AGGREGATES, Key.AGGREGATES_PUSHED, Key.RUNTIME, Key.RUNTIME_COLUMNS, Key.SOURCE, Key.SOURCE_URL, Key.REMOTE_QUERY, Key.VERDICTS, Key.LIMIT, Key.ORDER, Key.LIMIT_NOTE, Key.PARTITIONS, Key.DESCRIPTION, Key.METADATA, Key.TRACE)),
      Map.entry(Method.READ, List.of(Key.READ_INFO, Key.SMALL)),
      Map.entry(Method.READER_SOURCE, List.of(Key.DATA_SOURCE, Key.PYTHON_VERSION)),
      Map.entry(Method.TABLES, List.of(Key.TABLES)),
      Map.entry(Method.WRITE, List.of(Key.SNAPSHOT_ID, Key.FILES, Key.ROWS)));
}
