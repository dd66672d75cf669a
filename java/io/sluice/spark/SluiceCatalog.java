package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import io.sluice.spark.Protocol.Method;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * One attached source as a Spark catalog: {@code spark.sql.catalog.NAME=io.sluice.spark.SluiceCatalog}
 * with {@code .url}, {@code .password} (or {@code .password.env}) and {@code .pushdown}.
 *
 * <p>Lake catalogs take CREATE TABLE (partition transforms, TBLPROPERTIES), DROP TABLE,
 * ALTER TABLE (columns), CREATE NAMESPACE and writes; the planner decides each and refuses them for SQL sources,
 * naming the source. Options are read from the session's configuration at every lookup, so
 * attaching a source again under the same name takes effect although Spark keeps the
 * catalog object, and a detached one fails clearly. Listing, describing and every pushdown decision are the Python planner's.
 */
public class SluiceCatalog implements StagingTableCatalog, SupportsNamespaces, ProcedureCatalog {
  /** Session setting read when a table is looked up: "false" plans the reference path (nothing pushed). */
  public static final String PUSHDOWN_CONF = "spark.sluice.pushdown";

  private String name;

  /** The options are read from the session's configuration at every lookup (see {@link #source}). */
  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    if (!Bridge.isRegistered()) {
      // no PySpark driver ran sluice.spark.install (spark-sql, a Thrift or Connect server): what it installs
      SelectiveScans.install(org.apache.spark.sql.SparkSession.active());
      RowLevelWrites.install((org.apache.spark.sql.classic.SparkSession) org.apache.spark.sql.SparkSession.active());
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String[] defaultNamespace() {
    return new String[0];
  }

  /** The options in force now, from the session's configuration: detaching removes them. */
  SourceRef source() {
    Map<String, String> options = new HashMap<>();
    String prefix = "spark.sql.catalog." + name + ".";
    scala.collection.Iterator<scala.Tuple2<String, String>> all = SQLConf.get().getAllConfs().iterator();
    while (all.hasNext()) {
      scala.Tuple2<String, String> entry = all.next();
      if (entry._1().startsWith(prefix)) {
        options.put(entry._1().substring(prefix.length()), entry._2());
      }
    }
    boolean catalogPushdown = !"false".equalsIgnoreCase(options.getOrDefault("pushdown", "true"));
    boolean sessionPushdown = !"false".equalsIgnoreCase(SQLConf.get().getConfString(PUSHDOWN_CONF, "true"));
    return new SourceRef(name, options, catalogPushdown && sessionPushdown);
  }

  private static ArrayNode namespace(ObjectNode request, String[] namespace) {
    ArrayNode array = request.putArray(Key.NAMESPACE);
    for (String part : namespace) {
      array.add(part);
    }
    return array;
  }

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    JsonNode answer = Bridge.callForNamespace(Method.NAMESPACES, source().request());
    String[][] out = new String[answer.path(Key.NAMESPACES).size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = Bridge.strings(answer.path(Key.NAMESPACES).get(i));
    }
    return out;
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (namespace.length == 0) {
      return listNamespaces();
    }
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return new String[0][];
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    if (namespace.length == 0) {
      return true;
    }
    try {
      for (String[] known : listNamespaces()) {
        if (java.util.Arrays.equals(known, namespace)) {
          return true;
        }
      }
      return false;
    } catch (NoSuchNamespaceException error) {
      return false;
    }
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Collections.emptyMap();
  }

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    ObjectNode request = source().request();
    namespace(request, namespace);
    JsonNode tables = Bridge.callForNamespace(Method.TABLES, request).path(Key.TABLES);
    Identifier[] out = new Identifier[tables.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode table = tables.get(i);
      out[i] = Identifier.of(Bridge.strings(table.path(Key.NAMESPACE)), table.path(Key.NAME).asText());
    }
    return out;
  }

  /** Name {@code ident} in a request: {@code namespace} and {@code name}. */
  static void identify(ObjectNode request, Identifier ident) {
    namespace(request, ident.namespace());
    request.put(Key.NAME, ident.name());
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    SourceRef source = source();
    return load(ident, source, source.request());
  }

  /** {@code VERSION AS OF}: the planner describes the table at that snapshot; the handle carries it. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    SourceRef source = source();
    ObjectNode request = source.request();
    request.put(Key.VERSION, version);
    return load(ident, source, request);
  }

  /** {@code TIMESTAMP AS OF} (microseconds since the epoch): the snapshot current at that moment. */
  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    SourceRef source = source();
    ObjectNode request = source.request();
    request.put(Key.TIMESTAMP, timestamp);
    return load(ident, source, request);
  }

  private Table load(Identifier ident, SourceRef source, ObjectNode request) throws NoSuchTableException {
    identify(request, ident);
    try {
      return SluiceTable.of(source, Bridge.call(Method.DESCRIBE, request), ident);
    } catch (NoSuchNamespaceException error) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public boolean tableExists(Identifier ident) {
    try {
      loadTable(ident);
      return true;
    } catch (NoSuchTableException missing) {
      return false;
    } catch (RuntimeException error) {
      throw error;
    } catch (Exception error) {  // TableNotFound, thrown past the signature (Bridge.unchecked)
      if (error instanceof TableNotFound) {
        return false;
      }
      throw new SluiceException(error.getMessage(), error);
    }
  }

  @Override
  @SuppressWarnings("deprecation")  // the Column[] form Spark calls delegates here with the same schema
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    ObjectNode request = createRequest(source(), ident, schema, partitions, properties);
    try {
      if (!Bridge.call(Method.CREATE_TABLE, request).path(Key.CREATED).asBoolean(false)) {
        throw new TableAlreadyExistsException(ident);
      }
      return loadTable(ident);
    } catch (NoSuchTableException error) {
      throw new SluiceException(error.getMessage(), error);
    }
  }

  /** A CREATE TABLE request: the table's name, Spark's schema (JSON), partition transforms and properties. */
  private static ObjectNode createRequest(
      SourceRef source, Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties) {
    ObjectNode request = source.request();
    identify(request, ident);
    request.put(Key.SCHEMA, schema.json());
    ArrayNode transforms = request.putArray(Key.PARTITIONING);
    for (Transform transform : partitions) {
      ObjectNode term = transforms.addObject();
      term.put("transform", transform.name());
      ArrayNode arguments = term.putArray("arguments");
      for (Expression argument : transform.arguments()) {
        if (argument instanceof NamedReference reference) {
          arguments.addObject().put("column", String.join(".", reference.fieldNames()));
        } else if (argument instanceof Literal<?> literal) {
          arguments.addObject().put("number", String.valueOf(literal.value()));
        } else {
          arguments.addObject().put("other", argument.describe());
        }
      }
    }
    ObjectNode props = request.putObject(Key.PROPERTIES);
    for (Map.Entry<String, String> entry : properties.entrySet()) {
      props.put(entry.getKey(), entry.getValue());
    }
    return request;
  }

  /**
   * CTAS: the table is created as {@link #createTable} does and Spark writes it as any table
   * (null: Spark loads it); a failed write drops it again, as before staging existed.
   */
  @Override
  @SuppressWarnings("deprecation")  // the Column[] and TableInfo forms Spark calls delegate here
  public StagedTable stageCreate(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    createTable(ident, schema, partitions, properties);
    return null;
  }

  /** REPLACE TABLE [AS SELECT]: nothing changes until the rows are written ({@link StagedReplace}). */
  @Override
  @SuppressWarnings("deprecation")  // the Column[] and TableInfo forms Spark calls delegate here
  public StagedTable stageReplace(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties) {
    return stageCreateOrReplace(ident, schema, partitions, properties);
  }

  /** CREATE OR REPLACE TABLE ... AS SELECT, createOrReplace(): as {@link #stageReplace} (Spark checked that a REPLACE's table exists). */
  @Override
  @SuppressWarnings("deprecation")  // the Column[] and TableInfo forms Spark calls delegate here
  public StagedTable stageCreateOrReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties) {
    SourceRef source = source();
    return new StagedReplace(source, ident, schema, createRequest(source, ident, schema, partitions, properties));
  }

  private boolean drop(Identifier ident) {
    ObjectNode request = source().request();
    identify(request, ident);
    return Bridge.callUnchecked(Method.DROP_TABLE, request).path(Key.DROPPED).asBoolean(false);
  }

  /** Drops the table and deletes its files (a failed CTAS leaves nothing behind; see docs/lake.md). */
  @Override
  public boolean dropTable(Identifier ident) {
    return drop(ident);
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return drop(ident);
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata) throws NamespaceAlreadyExistsException {
    ObjectNode request = source().request();
    namespace(request, namespace);
    JsonNode answer;
    try {
      answer = Bridge.callForNamespace(Method.CREATE_NAMESPACE, request);
    } catch (NoSuchNamespaceException error) {
      throw new SluiceException(error.getMessage(), error);
    }
    if (!answer.path(Key.CREATED).asBoolean(false)) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  private UnsupportedOperationException readOnly(String what) {
    return new UnsupportedOperationException(
        "[SLUICE] catalog " + name + " does not support " + what + " (Sluice creates, drops, alters and writes lake tables only)");
  }

  /**
   * ALTER TABLE: the changes go to the planner as JSON ({@code kind}, the column's path and the
   * change's own fields; a change without a JSON form as {@code other} with its description),
   * which applies them all in one schema update or refuses them, naming the column.
   */
  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    ObjectNode request = source().request();
    identify(request, ident);
    ArrayNode array = request.putArray(Key.CHANGES);
    for (TableChange change : changes) {
      ObjectNode json = array.addObject();
      if (change instanceof TableChange.ColumnChange column) {
        ArrayNode path = json.putArray("column");
        for (String part : column.fieldNames()) {
          path.add(part);
        }
      }
      if (change instanceof TableChange.AddColumn add) {
        json.put("kind", "add_column");
        json.put("type", add.dataType().json());
        json.put("nullable", add.isNullable());
        json.put("comment", add.comment());
        position(json, add.position());
        json.put("default", add.defaultValue() == null ? null : add.defaultValue().getSql());
      } else if (change instanceof TableChange.RenameColumn rename) {
        json.put("kind", "rename_column");
        json.put("new_name", rename.newName());
      } else if (change instanceof TableChange.DeleteColumn delete) {
        json.put("kind", "drop_column");
        json.put("if_exists", Boolean.TRUE.equals(delete.ifExists()));
      } else if (change instanceof TableChange.UpdateColumnType update) {
        json.put("kind", "update_column_type");
        json.put("type", update.newDataType().json());
      } else if (change instanceof TableChange.UpdateColumnNullability update) {
        json.put("kind", "update_column_nullability");
        json.put("nullable", update.nullable());
      } else if (change instanceof TableChange.UpdateColumnComment update) {
        json.put("kind", "update_column_comment");
        json.put("comment", update.newComment());
      } else if (change instanceof TableChange.UpdateColumnPosition update) {
        json.put("kind", "update_column_position");
        position(json, update.position());
      } else {
        json.put("kind", "other");
        json.put("description", change.getClass().getSimpleName() + " " + change);
      }
    }
    try {
      Bridge.call(Method.ALTER_TABLE, request);
    } catch (NoSuchNamespaceException error) {
      throw new NoSuchTableException(ident);
    }
    return loadTable(ident);
  }

  /** A column position as JSON: {@code "first": true} or {@code "after": column}; nothing when null. */
  private static void position(ObjectNode json, TableChange.ColumnPosition position) {
    if (position instanceof TableChange.First) {
      json.put("first", true);
    } else if (position instanceof TableChange.After after) {
      json.put("after", after.column());
    }
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw readOnly("RENAME TABLE");
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw readOnly("ALTER NAMESPACE");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade) {
    throw readOnly("DROP NAMESPACE");
  }

  /** {@code CALL <catalog>.system.<procedure>(...)}: {@link Procedures} (plan, create_tag, drop_tag). */
  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    return Procedures.load(this, ident);
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    return Procedures.list(namespace);
  }
}
