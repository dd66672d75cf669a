package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import io.sluice.spark.Protocol.Method;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.SimpleProcedure;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A catalog's stored procedures, {@code CALL <catalog>.system.<name>(...)}: Spark parses and binds
 * the call (positional or {@code name => value} arguments, cast to the parameters' types); the
 * planner does the work ({@code sluice/planner/tags.py}) and refuses sources that are not lakes.
 *
 * <p>{@code plan(query, run)} ({@link PlanProcedure}, every catalog): a query's Sluice scans for a
 * client without py4j (Spark Connect). {@code create_tag(table, tag [, snapshot_id])} and {@code drop_tag(table, tag)} stand in for
 * Iceberg's {@code ALTER TABLE ... CREATE TAG}, which Spark's own parser lacks. Each returns one
 * row: the table, the tag and the snapshot it names (or named).
 */
final class Procedures {
  private Procedures() {}

  static final String NAMESPACE = "system";

  private static final StructType RESULT = new StructType()
      .add("table", DataTypes.StringType, false)
      .add("tag", DataTypes.StringType, false)
      .add("snapshot_id", DataTypes.LongType, false);

  private static final List<String> NAMES = List.of(PlanProcedure.NAME, "create_tag", "drop_tag");

  static Identifier[] list(String[] namespace) {
    if (!isSystem(namespace)) {
      return new Identifier[0];
    }
    return NAMES.stream().map(name -> Identifier.of(namespace, name)).toArray(Identifier[]::new);
  }

  /** A procedure's answer: one row of {@code schema}, as the local scan Spark reads a call's result from. */
  static Iterator<Scan> oneRow(StructType schema, InternalRow row) {
    Scan result = new LocalScan() {
      @Override
      public InternalRow[] rows() {
        return new InternalRow[] {row};
      }

      @Override
      public StructType readSchema() {
        return schema;
      }
    };
    return List.<Scan>of(result).iterator();
  }

  /** Spark hands the namespace as the user spelled it: {@code SYSTEM.plan} is {@code system.plan}. */
  private static boolean isSystem(String[] namespace) {
    return namespace.length == 1 && namespace[0].equalsIgnoreCase(NAMESPACE);
  }

  static UnboundProcedure load(SluiceCatalog catalog, Identifier ident) {
    if (isSystem(ident.namespace())) {
      String name = ident.name().toLowerCase(java.util.Locale.ROOT);
      if (name.equals(PlanProcedure.NAME)) {
        return new PlanProcedure();
      }
      if (name.equals("create_tag")) {
        return new Tag(catalog, Method.CREATE_TAG, true);
      }
      if (name.equals("drop_tag")) {
        return new Tag(catalog, Method.DROP_TAG, false);
      }
    }
    throw new SluiceException("catalog " + catalog.name() + " has no procedure "
        + String.join(".", ident.namespace()) + (ident.namespace().length > 0 ? "." : "") + ident.name()
        + " (it has " + NAMESPACE + "." + String.join(", " + NAMESPACE + ".", NAMES) + ")");
  }

  /** create_tag or drop_tag: the arguments go to the planner as they were given. */
  private static final class Tag implements SimpleProcedure {
    private final SluiceCatalog catalog;
    private final String method;
    private final boolean create;

    Tag(SluiceCatalog catalog, String method, boolean create) {
      this.catalog = catalog;
      this.method = method;
      this.create = create;
    }

    @Override
    public String name() {
      return method;
    }

    @Override
    public String description() {
      return create
          ? "Tag a snapshot of a lake table (default: the current one); read it with VERSION AS OF 'tag'"
          : "Remove a tag from a lake table; its snapshot stays";
    }

    @Override
    public ProcedureParameter[] parameters() {
      ProcedureParameter table = ProcedureParameter.in("table", DataTypes.StringType).build();
      ProcedureParameter tag = ProcedureParameter.in("tag", DataTypes.StringType).build();
      if (!create) {
        return new ProcedureParameter[] {table, tag};
      }
      ProcedureParameter snapshot = ProcedureParameter.in("snapshot_id", DataTypes.LongType).defaultValue("NULL").build();
      return new ProcedureParameter[] {table, tag, snapshot};
    }

    @Override
    public boolean isDeterministic() {
      return false;
    }

    @Override
    public Iterator<Scan> call(InternalRow input) {
      ObjectNode request = catalog.source().request();
      request.put(Key.TABLE, argument(input, 0, "table"));
      request.put(Key.TAG, argument(input, 1, "tag"));
      if (create && !input.isNullAt(2)) {
        request.put(Key.SNAPSHOT_ID, input.getLong(2));
      }
      JsonNode answer = Bridge.callUnchecked(method, request);
      InternalRow row = new GenericInternalRow(new Object[] {
          UTF8String.fromString(answer.path(Key.TABLE).asText()),
          UTF8String.fromString(answer.path(Key.TAG).asText()),
          answer.path(Key.SNAPSHOT_ID).asLong()});
      return oneRow(RESULT, row);
    }

    private String argument(InternalRow input, int position, String parameter) {
      if (input.isNullAt(position)) {
        throw new SluiceException(method + ": argument " + parameter + " is NULL");
      }
      return input.getUTF8String(position).toString();
    }
  }
}
