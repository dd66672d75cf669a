package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsDeleteV2;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A described remote table: its Spark schema and the planner's handle to it. Every table
 * offers writes and {@code DELETE FROM} (and so {@code TRUNCATE TABLE}, an always-true delete);
 * the planner refuses them for anything but a lake table, naming the source.
 */
class SluiceTable implements SupportsRead, SupportsWrite, SupportsDeleteV2 {
  final SourceRef source;
  /** The planner's description: {@code name}, {@code schema} (Spark's JSON form), {@code handle} (passed back as it is). */
  final JsonNode described;
  private final StructType schema;
  /** The name it was looked up by (null for a DataFrame reader's table, which is never written). */
  final Identifier ident;

  SluiceTable(SourceRef source, JsonNode described) {
    this(source, described, null);
  }

  /**
   * The table as the catalog hands it to Spark: a SQL table looked up by name is row-level
   * ({@link SluiceRowLevelTable}: UPDATE and MERGE by the row id the planner names, a writable
   * table's primary key, or refused with the planner's reason); a lake table's data is
   * {@link SluiceLakeTable} (UPDATE and MERGE copy-on-write); anything else is plain.
   */
  static SluiceTable of(SourceRef source, JsonNode described, Identifier ident) {
    boolean sql = described.path(Key.ROW_ID).size() > 0 || !described.path(Key.ROW_LEVEL_REFUSED).asText("").isEmpty();
    if (sql) {
      return new SluiceRowLevelTable(source, described, ident);
    }
    boolean lake = ident != null && described.path(Key.COPY_ON_WRITE).asBoolean();
    return lake ? new SluiceLakeTable(source, described, ident) : new SluiceTable(source, described, ident);
  }


  SluiceTable(SourceRef source, JsonNode described, Identifier ident) {
    this.source = source;
    this.ident = ident;
    this.described = described;
    this.schema = (StructType) DataType.fromJson(described.path(Key.SCHEMA).toString());
  }

  @Override
  public String name() {
    return described.path(Key.NAME).asText();
  }

  @Override
  @SuppressWarnings("deprecation")  // columns() derives from it; the schema is what the planner describes
  public StructType schema() {
    return schema;
  }

  /**
   * The lake table's identity partition columns, as the planner describes them: the columns
   * Spark takes in an {@code INSERT ... PARTITION (column = value)} clause.
   */
  @Override
  public Transform[] partitioning() {
    JsonNode columns = described.path(Key.PARTITIONING);
    Transform[] out = new Transform[columns.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Expressions.identity(columns.get(i).asText());
    }
    return out;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return ident == null
        ? EnumSet.of(TableCapability.BATCH_READ)
        : EnumSet.of(
            TableCapability.BATCH_READ,
            TableCapability.V1_BATCH_WRITE,
            TableCapability.TRUNCATE,
            TableCapability.OVERWRITE_BY_FILTER,
            // Spark checks these two for a dynamic overwrite, which OverwritePartitions plans on the V1 fallback
            TableCapability.BATCH_WRITE,
            TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new SluiceWrite(source, ident, "append");
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SluiceScanBuilder(this);
  }

  /** A table looked up by name takes any condition Spark can translate: the planner decides how (or refuses). */
  @Override
  public boolean canDeleteWhere(Predicate[] predicates) {
    return ident != null;
  }

  /**
   * {@code DELETE FROM t WHERE ...}: Spark's conjuncts go to the planner as JSON
   * ({@link io.sluice.spark.Expressions#toJson}), which deletes them in one snapshot of a lake table
   * (sluice/lake/delete_rows.py) or one transaction of a writable SQL source, refusing a condition
   * the source does not evaluate exactly as Spark does (sluice/planner/deletes.py).
   */
  @Override
  public void deleteWhere(Predicate[] predicates) {
    Bridge.callUnchecked(Protocol.Method.DELETE, deleteRequest(predicates));
  }

  /** The planner's request naming this table and Spark's conjuncts (JSON, {@link io.sluice.spark.Expressions#toJson}). */
  ObjectNode deleteRequest(Predicate[] predicates) {
    ObjectNode request = source.request();
    SluiceCatalog.identify(request, ident);
    ArrayNode conjuncts = request.putArray(Key.PREDICATES);
    for (Predicate predicate : predicates) {
      conjuncts.add(io.sluice.spark.Expressions.toJson(predicate));
    }
    return request;
  }
}
