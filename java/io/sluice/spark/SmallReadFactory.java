package io.sluice.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.ObjectStreamException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads the partition the driver already read (an Arrow IPC stream the driver's Python wrote,
 * checked as Spark's Python worker checks it) by decoding it with Spark's own Arrow vectors, as
 * Spark decodes what a Python worker sends; any other partition goes to the workers' factory.
 * The partition is recognised by its pickled task: the same bytes mean the same remote request.
 *
 * <p>The rows answer one execution only. Spark keeps a DataFrame's physical plan, and with it
 * this factory, for every later action on it; those must see the table as it is then, as a
 * worker's read would. So the rows go out only while the SQL execution that read them runs
 * (Java serialization of a job's tasks calls {@link #writeReplace} on the driver, once or more
 * per job); a later action gets the workers' factory and reads the table again.
 */
final class SmallReadFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final PartitionReaderFactory workers;
  private final byte[] task;
  private final AtomicReference<byte[]> rows;
  /** The SQL execution the rows were read for; null: none (then they are never used). */
  private final Long execution;

  SmallReadFactory(PartitionReaderFactory workers, byte[] task, byte[] rows) {
    this.workers = workers;
    this.task = task;
    this.rows = new AtomicReference<>(rows);
    String id = SparkContext.getOrCreate().getLocalProperty(SQLExecution$.MODULE$.EXECUTION_ID_KEY());
    this.execution = id == null ? null : Long.valueOf(id);
  }

  /** The rows while their execution runs; null after (and the bytes are let go). */
  private byte[] current() {
    if (execution == null || SQLExecution$.MODULE$.getQueryExecution(execution) == null) {
      rows.set(null);
    }
    return rows.get();
  }

  /** What a job's tasks carry: the rows during the execution that read them, the workers' factory after. */
  private Object writeReplace() throws ObjectStreamException {
    byte[] now = current();
    return now == null ? workers : new FetchedRows(workers, task, now);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    byte[] now = current();
    return now != null && matches(partition, task) ? new ArrowRows(now) : workers.createReader(partition);
  }

  private static boolean matches(InputPartition partition, byte[] task) {
    return partition instanceof PythonInputPartition python && Arrays.equals(python.pickedPartition(), task);
  }

  /** The factory a job's tasks deserialize: the driver's rows for the small partition. */
  private static final class FetchedRows implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    private final PartitionReaderFactory workers;
    private final byte[] task;
    private final byte[] rows;

    FetchedRows(PartitionReaderFactory workers, byte[] task, byte[] rows) {
      this.workers = workers;
      this.task = task;
      this.rows = rows;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      return matches(partition, task) ? new ArrowRows(rows) : workers.createReader(partition);
    }
  }

  /** The rows of an Arrow IPC stream, batch by batch. */
  private static final class ArrowRows implements PartitionReader<InternalRow> {
    private final BufferAllocator allocator;
    private final ArrowStreamReader reader;
    private Iterator<InternalRow> rows;
    private InternalRow current;

    ArrowRows(byte[] stream) {
      allocator = ArrowUtils$.MODULE$.rootAllocator().newChildAllocator("sluice small read", 0, Long.MAX_VALUE);
      reader = new ArrowStreamReader(new ByteArrayInputStream(stream), allocator);
    }

    @Override
    public boolean next() throws IOException {
      while (rows == null || !rows.hasNext()) {
        if (!reader.loadNextBatch()) {
          return false;
        }
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        ColumnVector[] columns = root.getFieldVectors().stream().map(ArrowColumnVector::new).toArray(ColumnVector[]::new);
        rows = new ColumnarBatch(columns, root.getRowCount()).rowIterator();
      }
      current = rows.next();
      return true;
    }

    @Override
    public InternalRow get() {
      return current;
    }

    @Override
    public void close() {
      try {
        reader.close();
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      } finally {
        allocator.close();
      }
    }
  }
}
