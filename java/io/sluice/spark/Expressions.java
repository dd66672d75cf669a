package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import org.apache.spark.sql.connector.expressions.Cast;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Extract;
import org.apache.spark.sql.connector.expressions.GeneralScalarExpression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.NullOrdering;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.UserDefinedScalarFunc;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Avg;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.GeneralAggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.expressions.aggregate.Sum;
import org.apache.spark.sql.types.Decimal;

/**
 * Spark's V2 expressions as JSON for the Python planner, shape for shape: nothing is
 * decided here. A reference is {@code {"ref": [...]}}, a literal {@code {"lit": text,
 * "type": catalogString}} (Spark's internal value as text: days for a date, microseconds
 * for timestamps), anything else {@code {"op": name, "args": [...]}}. Python knows which
 * operators it can push; an unknown one is UNSUPPORTED there, never an error here.
 *
 * <p>Two shapes keep deep input cheap: a chain of one connective ({@code a OR b OR ...},
 * thousands long in generated queries) arrives flat, as one node with every operand, and
 * anything nested deeper than {@link #MAX_DEPTH} arrives as {@code TOO_DEEP} (left to Spark).
 */
final class Expressions {
  /** Deeper than any predicate a remote engine parses (Sluice pushes at most 64 levels). */
  static final int MAX_DEPTH = 100;

  private Expressions() {}

  static ObjectNode toJson(Expression expression) {
    return toJson(expression, 0);
  }

  private static ObjectNode toJson(Expression expression, int depth) {
    ObjectNode node = Bridge.JSON.createObjectNode();
    if (depth > MAX_DEPTH) {
      node.put("op", "TOO_DEEP");
      node.put("text", "a predicate nested more than " + MAX_DEPTH + " levels deep");
    } else if (expression instanceof NamedReference reference) {
      ArrayNode parts = node.putArray("ref");
      for (String part : reference.fieldNames()) {
        parts.add(part);
      }
    } else if (expression instanceof Literal<?> literal) {
      node.put("type", literal.dataType().catalogString());
      literalValue(node, literal.value());
    } else if (expression instanceof Cast cast) {
      node.put("op", "CAST");
      node.put("from", cast.expressionDataType().catalogString());
      node.put("to", cast.dataType().catalogString());
      node.putArray("args").add(toJson(cast.expression(), depth + 1));
    } else if (expression instanceof Extract extract) {
      node.put("op", "EXTRACT");
      node.put("field", extract.field());
      node.putArray("args").add(toJson(extract.source(), depth + 1));
    } else if (expression instanceof UserDefinedScalarFunc function) {
      node.put("op", "UDF");
      node.put("name", function.canonicalName());
      children(node, function.children(), depth);
    } else if (expression instanceof GeneralScalarExpression general
        && (general.name().equals("AND") || general.name().equals("OR"))) {
      node.put("op", general.name());
      ArrayNode args = node.putArray("args");
      for (Expression operand : chain(general)) {
        args.add(toJson(operand, depth + 1));
      }
    } else if (expression instanceof GeneralScalarExpression general) {  // predicates included
      node.put("op", general.name());
      children(node, general.children(), depth);
    } else {
      node.put("op", "UNKNOWN");
      node.put("text", String.valueOf(expression));
    }
    return node;
  }

  /**
   * An offered aggregation: {@code {"group_by": [expr], "aggregates": [{"fn": COUNT_STAR | COUNT |
   * SUM | AVG | MIN | MAX | a general function's name, "distinct": bool, "args": [expr]}]}}.
   */
  static ObjectNode aggregation(Aggregation aggregation) {
    ObjectNode node = Bridge.JSON.createObjectNode();
    ArrayNode keys = node.putArray("group_by");
    for (Expression key : aggregation.groupByExpressions()) {
      keys.add(toJson(key));
    }
    ArrayNode functions = node.putArray("aggregates");
    for (AggregateFunc function : aggregation.aggregateExpressions()) {
      functions.add(aggregate(function));
    }
    return node;
  }

  private static ObjectNode aggregate(AggregateFunc function) {
    ObjectNode node = Bridge.JSON.createObjectNode();
    String name;
    boolean distinct = false;
    if (function instanceof CountStar) {
      name = "COUNT_STAR";
    } else if (function instanceof Count count) {
      name = "COUNT";
      distinct = count.isDistinct();
    } else if (function instanceof Sum sum) {
      name = "SUM";
      distinct = sum.isDistinct();
    } else if (function instanceof Avg avg) {
      name = "AVG";
      distinct = avg.isDistinct();
    } else if (function instanceof Min) {
      name = "MIN";
    } else if (function instanceof Max) {
      name = "MAX";
    } else if (function instanceof GeneralAggregateFunc general) {
      name = general.name();
      distinct = general.isDistinct();
    } else {
      name = "UNKNOWN " + function;
    }
    node.put("fn", name);
    node.put("distinct", distinct);
    children(node, function.children(), 0);
    return node;
  }

  static ObjectNode sortOrder(SortOrder order) {
    ObjectNode node = Bridge.JSON.createObjectNode();
    node.set("expr", toJson(order.expression()));
    node.put("descending", order.direction() == SortDirection.DESCENDING);
    node.put("nulls_first", order.nullOrdering() == NullOrdering.NULLS_FIRST);
    return node;
  }

  private static void children(ObjectNode node, Expression[] children, int depth) {
    ArrayNode args = node.putArray("args");
    for (Expression child : children) {
      args.add(toJson(child, depth + 1));
    }
  }

  /** The operands of a chain of one connective, left to right, walked without recursion. */
  private static List<Expression> chain(GeneralScalarExpression connective) {
    List<Expression> operands = new ArrayList<>();
    Deque<Expression> pending = new ArrayDeque<>();
    pending.push(connective);
    while (!pending.isEmpty()) {
      Expression next = pending.pop();
      if (next instanceof GeneralScalarExpression general && general.name().equals(connective.name())) {
        Expression[] children = general.children();
        for (int i = children.length - 1; i >= 0; i--) {
          pending.push(children[i]);
        }
      } else {
        operands.add(next);
      }
    }
    return operands;
  }

  private static void literalValue(ObjectNode node, Object value) {
    if (value == null) {
      node.putNull("lit");
    } else if (value instanceof Decimal decimal) {
      node.put("lit", decimal.toJavaBigDecimal().toPlainString());
    } else if (value instanceof byte[] bytes) {
      node.put("lit", Base64.getEncoder().encodeToString(bytes));
    } else {
      // UTF8String, boxed numbers (Double.toString spells NaN, Infinity and -0.0), Boolean
      node.put("lit", value.toString());
    }
  }
}
