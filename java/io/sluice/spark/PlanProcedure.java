package io.sluice.spark;

import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.SimpleProcedure;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code CALL <sluice catalog>.system.plan(query => '...' [, run => true])}: what
 * {@code Federation.plan} reads through py4j ({@link Plans#scans} of the query's optimised plan,
 * and that plan's tree), as one row, for a client with no JVM of its own: a Spark Connect
 * client ({@code sluice explain} on a running server) or a JDBC one. {@code run => true} first
 * runs the query to completion as {@code explain(analyze=True)} does, so the scans' transfer
 * metrics are written (to the directory the session's {@code spark.sluice.metrics} names).
 * It runs on the driver, in the calling session (Spark invokes procedures while analysing the CALL).
 */
final class PlanProcedure implements SimpleProcedure {
  static final String NAME = "plan";
  static final Identifier IDENTIFIER = Identifier.of(new String[] {"system"}, NAME);

  private static final StructType RESULT = new StructType()
      .add("plan", DataTypes.StringType, false)
      .add("scans", DataTypes.StringType, false);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "the Sluice scans of a query's optimised plan, as JSON (run => true: after running it)";
  }

  @Override
  public ProcedureParameter[] parameters() {
    return new ProcedureParameter[] {
      ProcedureParameter.in("query", DataTypes.StringType).build(),
      ProcedureParameter.in("run", DataTypes.BooleanType).defaultValue("false").build(),
    };
  }

  @Override
  public boolean isDeterministic() {
    return false;  // the sources' data and the planner's answers change
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    if (input.isNullAt(0)) {
      throw new IllegalArgumentException("[SLUICE] system.plan: query must not be NULL");
    }
    String query = input.getUTF8String(0).toString();
    boolean run = !input.isNullAt(1) && input.getBoolean(1);
    SparkSession session = (SparkSession) org.apache.spark.sql.SparkSession.active();
    Dataset<?> frame = session.sql(query);
    QueryExecution execution = frame.queryExecution();
    if (run) {
      Plans.run(execution);
    }
    String scans = Plans.scans(execution.optimizedPlan());
    // the optimised logical plan: the physical one would already plan the reads' partitions
    InternalRow row = new GenericInternalRow(new Object[] {
      UTF8String.fromString(execution.optimizedPlan().treeString()), UTF8String.fromString(scans)
    });
    return Procedures.oneRow(RESULT, row);
  }
}
