package io.sluice.spark;

import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsDeleteV2;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.StructType;

/**
 * The table of a {@code DELETE} Spark hands the source ({@code DeleteFromTableExec}), as
 * {@link RowLevelWrites} plans it: the Sluice table itself in every respect, but printed by
 * EXPLAIN as the planner's decision for these conjuncts (a pushed {@code DELETE ... WHERE},
 * with each conjunct's verdict, or the refusal the statement would raise).
 */
final class ExplainedDelete implements SupportsDeleteV2 {
  private final SluiceTable table;
  private final WriteExplain explained;

  ExplainedDelete(SluiceTable table, Predicate[] predicates) {
    this.table = table;
    this.explained = new WriteExplain(() -> {
      var request = table.deleteRequest(predicates);
      request.put(Protocol.Key.MODE, "delete");
      return request;
    });
  }

  @Override
  public String name() {
    return table.name();
  }

  @Override
  @SuppressWarnings("deprecation")  // the table's own schema, as the Sluice table answers it
  public StructType schema() {
    return table.schema();
  }

  @Override
  public Column[] columns() {
    return table.columns();
  }

  @Override
  public Transform[] partitioning() {
    return table.partitioning();
  }

  @Override
  public Map<String, String> properties() {
    return table.properties();
  }

  @Override
  public Set<TableCapability> capabilities() {
    return table.capabilities();
  }

  @Override
  public boolean canDeleteWhere(Predicate[] predicates) {
    return table.canDeleteWhere(predicates);
  }

  @Override
  public void deleteWhere(Predicate[] predicates) {
    table.deleteWhere(predicates);
  }

  @Override
  public String toString() {
    return explained.toString();
  }
}
