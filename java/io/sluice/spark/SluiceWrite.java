package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.InsertableRelation;

/**
 * A write to a lake table: Spark hands the driver the query as a DataFrame (its V1 fallback,
 * {@link V1Write}) and the Python planner runs Sluice's ingest job over it (one Iceberg
 * snapshot, nothing left behind on failure). Truncate is INSERT OVERWRITE in static mode.
 */
final class SluiceWrite implements WriteBuilder, SupportsTruncate, V1Write {
  private final SourceRef source;
  private final Identifier ident;
  private final boolean overwrite;

  SluiceWrite(SourceRef source, Identifier ident, boolean overwrite) {
    this.source = source;
    this.ident = ident;
    this.overwrite = overwrite;
  }

  @Override
  public WriteBuilder truncate() {
    return new SluiceWrite(source, ident, true);
  }

  @Override
  public Write build() {
    return this;
  }

  @Override
  public InsertableRelation toInsertableRelation() {
    return (data, overwriteAll) -> {
      ObjectNode request = source.request();
      SluiceCatalog.identify(request, ident);
      request.put("mode", overwrite || overwriteAll ? "overwrite" : "append");
      Bridge.write(request, data);
    };
  }
}
