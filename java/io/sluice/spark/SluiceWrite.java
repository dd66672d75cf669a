package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.InsertableRelation;

/**
 * A write to a lake table: Spark hands the driver the query as a DataFrame (its V1 fallback,
 * {@link V1Write}) and the Python planner runs Sluice's ingest job over it (one Iceberg
 * snapshot, nothing left behind on failure). Truncate is INSERT OVERWRITE in static mode;
 * dynamic partition overwrite ({@code partitionOverwriteMode=dynamic}) is planned on the same
 * fallback by {@link OverwritePartitions}, and the planner replaces the partitions the rows touch.
 * An overwrite by a filter ({@code INSERT OVERWRITE ... PARTITION (p = v)} in static mode,
 * {@code DataFrameWriterV2.overwrite(condition)}) carries Spark's predicates to the planner,
 * which replaces the files they select or refuses the statement.
 */
final class SluiceWrite implements WriteBuilder, SupportsOverwriteV2, SupportsDynamicOverwrite, V1Write {
  private final SourceRef source;
  private final Identifier ident;
  /** The planner's write mode: {@code append}, {@code overwrite} or {@code overwrite-partitions}. */
  private final String mode;
  /** Spark's overwrite filter, conjuncts (mode {@code overwrite-filter} only). */
  private final Predicate[] predicates;
  /** A replace's new table (REPLACE TABLE AS SELECT, createOrReplace): every write replaces the table whole. */
  private final StagedReplace staged;

  SluiceWrite(SourceRef source, Identifier ident, String mode) {
    this(source, ident, mode, new Predicate[0], null);
  }

  /** The rows of a replace: Spark truncates the staged table; the planner replaces the old one in one step. */
  SluiceWrite(SourceRef source, Identifier ident, StagedReplace staged) {
    this(source, ident, "replace", new Predicate[0], staged);
  }

  private SluiceWrite(SourceRef source, Identifier ident, String mode, Predicate[] predicates, StagedReplace staged) {
    this.source = source;
    this.ident = ident;
    this.mode = mode;
    this.predicates = predicates;
    this.staged = staged;
  }

  @Override
  public WriteBuilder truncate() {
    return staged != null ? this : new SluiceWrite(source, ident, "overwrite");
  }

  /** Whether the filter selects whole files is the planner's decision, made when the write runs. */
  @Override
  public WriteBuilder overwrite(Predicate[] filter) {
    return new SluiceWrite(source, ident, "overwrite-filter", filter, null);
  }

  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    return new SluiceWrite(source, ident, "overwrite-partitions", new Predicate[0], null);
  }

  @Override
  public Write build() {
    return this;
  }

  /** Reached only when Spark plans the write as a V2 batch: a dynamic overwrite in a session without Sluice's strategy. */
  @Override
  public BatchWrite toBatch() {
    throw new SluiceException("dynamic partition overwrite of " + ident + " needs Sluice's planning strategy in this "
        + "Spark session: call sluice.spark.install(spark) (Federation does) before the statement");
  }

  /** EXPLAIN's words for this write: the planner's path, statements and reasons ({@link WriteExplain}). */
  private final WriteExplain explained = new WriteExplain(this::explainRequest);

  private ObjectNode explainRequest() {
    ObjectNode request = WriteExplain.request(source, ident, mode);
    ArrayNode filter = request.putArray(Key.PREDICATES);
    for (Predicate predicate : predicates) {
      filter.add(Expressions.toJson(predicate));
    }
    return request;
  }

  @Override
  public String toString() {
    return explained.toString();
  }

  @Override
  public InsertableRelation toInsertableRelation() {
    return (data, overwriteAll) -> {
      if (staged != null) {
        staged.replace(data);
        return;
      }
      ObjectNode request = source.request();
      SluiceCatalog.identify(request, ident);
      request.put(Key.MODE, overwriteAll ? "overwrite" : mode);
      ArrayNode filter = request.putArray(Key.PREDICATES);
      for (Predicate predicate : predicates) {
        filter.add(Expressions.toJson(predicate));
      }
      Bridge.write(request, data);
    };
  }
}
