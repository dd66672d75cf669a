package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import java.util.function.Supplier;

/**
 * What Spark's EXPLAIN shows for a Sluice write: Spark prints a write node's arguments by their
 * {@code toString}, so Sluice's write objects answer it with the planner's one line (the path,
 * the source's statements and why: sluice/planner/write_explain.py), as a scan's
 * {@code description()} carries its remote query. Asked once per object, when first printed;
 * answering reads the catalog and writes nothing. A failure to explain is shown, never raised:
 * printing a plan must not fail the statement it describes.
 */
final class WriteExplain {
  private final Supplier<ObjectNode> request;
  private volatile String shown;

  /** {@code request}: the explain_write request (the table named, the mode and what the mode needs). */
  WriteExplain(Supplier<ObjectNode> request) {
    this.request = request;
  }

  /** A request for {@code table} in write {@code mode}, to add the mode's own keys to. */
  static ObjectNode request(SourceRef source, org.apache.spark.sql.connector.catalog.Identifier ident, String mode) {
    ObjectNode request = source.request();
    SluiceCatalog.identify(request, ident);
    request.put(Key.MODE, mode);
    return request;
  }

  @Override
  public String toString() {
    String known = shown;
    if (known == null) {
      try {
        known = Bridge.callUnchecked(Protocol.Method.EXPLAIN_WRITE, request.get()).path(Key.DESCRIPTION).asText();
      } catch (RuntimeException error) {
        known = "SluiceWrite (not explained: " + error.getMessage() + ")";
      }
      shown = known;
    }
    return known;
  }
}
