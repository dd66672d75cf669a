package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import scala.runtime.BoxedUnit;

/**
 * Reads back what Spark decided: the Sluice scans of an optimised plan (subqueries too), for
 * {@code Federation.plan}, {@code explain} and the metrics of {@code explain(analyze=True)}.
 * A scan appears once: the subquery of a runtime filter (dynamic pruning) holds the very scan
 * of the join side it reuses, which is not a second read.
 */
public final class Plans {
  private Plans() {}

  /** Every Sluice scan's plan (the planner's answer, as JSON) in {@code optimized}, in plan order. */
  public static String scans(LogicalPlan optimized) {
    List<LogicalPlan> plans = new ArrayList<>();
    plans.add(optimized);
    scala.collection.Iterator<LogicalPlan> subqueries = optimized.subqueriesAll().iterator();
    while (subqueries.hasNext()) {
      plans.add(subqueries.next());
    }
    ArrayNode found = Bridge.JSON.createArrayNode();
    Set<SluiceScan> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (LogicalPlan plan : plans) {
      plan.foreach(node -> {
        if (node instanceof DataSourceV2ScanRelation relation && relation.scan() instanceof SluiceScan scan && seen.add(scan)) {
          found.add(scan.plan());
        }
        return BoxedUnit.UNIT;
      });
    }
    return found.toString();
  }

  /**
   * Runs {@code execution} to completion as one SQL execution, as an action runs it, counting
   * its rows without collecting them. Within an execution the rows a small scan's driver read
   * fetched answer the scan (SmallReadFactory); outside one the workers would read it again.
   */
  public static long run(QueryExecution execution) {
    return SQLExecution.withNewExecutionId(execution, scala.Option.apply("sluice: measure transfers"), () -> execution.toRdd().count());
  }
}
