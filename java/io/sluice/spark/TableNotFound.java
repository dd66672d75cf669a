package io.sluice.spark;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import scala.Option;

/**
 * Spark's TABLE_OR_VIEW_NOT_FOUND, carrying what the source has instead (masked).
 *
 * <p>Not a {@code NoSuchTableException}: Spark's table lookup swallows that one and raises its
 * own error, which would lose Sluice's message (the tables the source does have, its URL).
 */
public class TableNotFound extends AnalysisException {
  private static final long serialVersionUID = 1L;

  TableNotFound(String relation, String detail) {
    super("[TABLE_OR_VIEW_NOT_FOUND] The table or view " + relation + " cannot be found: " + detail + " SQLSTATE: 42P01",
        Option.empty(), Option.empty(), Option.empty(), Option.apply("TABLE_OR_VIEW_NOT_FOUND"),
        scala.collection.immutable.Map$.MODULE$.<String, String>empty().updated("relationName", relation),
        new QueryContext[0]);
  }
}
