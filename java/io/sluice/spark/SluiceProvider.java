package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Method;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("sluice").option("url", ...).option("table", "schema.name").load()}:
 * the same table, negotiation and reader as a catalog's, for one table named by options.
 * With option {@code "query"} instead of {@code "table"}: a passthrough, the source's own SQL
 * read-only (sluice/planner/passthrough.py decides; nothing here differs).
 */
public class SluiceProvider implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "sluice";
  }

  private static SluiceTable describe(Map<String, String> options) {
    boolean pushdown = !"false".equalsIgnoreCase(options.getOrDefault("pushdown", "true"))
        && !"false".equalsIgnoreCase(SQLConf.get().getConfString(SluiceCatalog.PUSHDOWN_CONF, "true"));
    SourceRef source = new SourceRef(null, options, pushdown);
    ObjectNode request = source.request();
    try {
      return new SluiceTable(source, Bridge.call(Method.DESCRIBE, request));
    } catch (NoSuchTableException | NoSuchNamespaceException error) {
      throw new SluiceException(error.getMessage(), error);
    }
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return describe(options.asCaseSensitiveMap()).schema();
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return describe(properties);
  }
}
