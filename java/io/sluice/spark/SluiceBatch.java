package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.spark.Protocol.Key;
import java.util.Base64;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition;

/**
 * A planned scan's batch: the Python data source's partitions, read by its workers, except
 * a small scan (the planner expects few rows, one partition), which the driver's Python reads
 * when Spark creates the reader factory, at execution, so that no worker is started for it
 * (sluice/spark/small_reads.py). Nothing is decided here: the planner said "small", and the
 * driver's read answers the rows or "too large" (then the workers read as for any scan).
 */
final class SluiceBatch implements Batch {
  private final SluiceScan scan;
  private final Batch python;
  /** The Python data source's scan this batch reads (one per plan of the scan). */
  private final Object reader;
  private final boolean small;
  private InputPartition[] partitions;

  SluiceBatch(SluiceScan scan, Object reader, Batch python, boolean small) {
    this.scan = scan;
    this.reader = reader;
    this.python = python;
    this.small = small;
  }

  /**
   * Two batches of one scan reading one plan are the same read: Spark compares them to reuse a
   * broadcast of this scan for a runtime filter (dynamic pruning) instead of reading it again.
   */
  @Override
  public boolean equals(Object other) {
    return other instanceof SluiceBatch that && that.scan == scan && that.reader == reader;
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(scan) * 31 + System.identityHashCode(reader);
  }

  @Override
  public synchronized InputPartition[] planInputPartitions() {
    if (partitions == null) {
      partitions = python.planInputPartitions();
    }
    return partitions;
  }

  /**
   * Spark takes the factory from the batch it made first and the partitions from the batch it
   * made after runtime filters re-planned the scan, so the small read follows the scan's latest
   * batch; the factory still reads any other partition through the workers.
   */
  @Override
  public PartitionReaderFactory createReaderFactory() {
    PartitionReaderFactory workers = python.createReaderFactory();
    SluiceBatch current = scan.latest() != null ? scan.latest() : this;
    return current.smallRead(workers);
  }

  private PartitionReaderFactory smallRead(PartitionReaderFactory workers) {
    if (!small) {
      return workers;
    }
    InputPartition[] planned = planInputPartitions();
    if (planned.length != 1 || !(planned[0] instanceof PythonInputPartition partition)) {
      return workers;
    }
    JsonNode answer = scan.fetch(partition);
    if (!answer.has(Key.IPC)) {
      return workers;  // more rows than the planner expected: read by a worker
    }
    return new SmallReadFactory(workers, partition.pickedPartition(), Base64.getDecoder().decode(answer.path(Key.IPC).asText()));
  }
}
