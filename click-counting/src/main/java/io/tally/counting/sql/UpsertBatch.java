package io.tally.counting.sql;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.Predicate;

/**
 * The rows of one or more tables, sent to PostgreSQL in one transaction in which no row that
 * PostgreSQL refuses as data ({@link SqlFailures#refusedData}) can hold back the others.
 *
 * <p>A batch is first sent whole, one JDBC batch per table, which is all a batch ever costs while
 * nothing is refused. When PostgreSQL refuses data, the transaction is rolled back and each table's
 * rows are sent again under savepoints, halves of a refused part again until every refused row
 * stands alone; everything else is written and committed in the same transaction. A refused row is
 * replaced by its table's stand-in when it has one ({@link UpsertTable#standIn}), and reported
 * either way. Its key is remembered, so that its later totals go straight to the stand-in (or are
 * set aside) without being sent, refused or reported again.
 *
 * <p>Any other failure is thrown, for the caller to retry: the transaction then left nothing
 * behind, and nothing is remembered of it.
 */
public final class UpsertBatch {

  /**
   * A row PostgreSQL refused.
   *
   * @param table the table it was refused by
   * @param row the row
   * @param reason PostgreSQL's SQLSTATE and message
   * @param stoodIn whether its stand-in was written instead
   */
  public record Refused(String table, Object row, String reason, boolean stoodIn) {}

  /** Refused keys remembered per table: far more than a healthy stream ever refuses. */
  private static final int REMEMBERED_REFUSALS = 10_000;

  private final List<Rows<?>> tables = new ArrayList<>();
  private long setAside;

  /** Adds a table to the batch; its rows are added through what this returns. */
  public <T> Rows<T> table(UpsertTable<T> table) {
    Rows<T> rows = new Rows<>(table);
    tables.add(rows);
    return rows;
  }

  /** Rows dropped unsent since the last call because their key was refused and has no stand-in. */
  public long takeSetAside() {
    long taken = setAside;
    setAside = 0;
    return taken;
  }

  /**
   * Writes every table's rows in one transaction and commits it, then empties the batch.
   *
   * @return the rows PostgreSQL refused, each once
   * @throws SQLException for anything but refused data; the batch is left as it was
   */
  public List<Refused> write(Connection db) throws SQLException {
    db.setAutoCommit(false);
    List<Refused> refused = new ArrayList<>();
    tables.forEach(rows -> rows.refusedHere.clear());
    try {
      for (Rows<?> rows : tables) {
        rows.executeAll(db);
      }
    } catch (SQLException e) {
      if (SqlFailures.refusedData(e) == null) {
        throw e;
      }
      db.rollback();
      for (Rows<?> rows : tables) {
        rows.isolate(db, refused);
      }
    }
    db.commit();
    for (Rows<?> rows : tables) {
      rows.commit();
    }
    return refused;
  }

  /** Drops every pending row, as after a write. */
  public void clear() {
    tables.forEach(rows -> rows.pending.clear());
  }

  /** One table's rows of the batch, the last of each key. */
  public final class Rows<T> {
    private final UpsertTable<T> table;
    private final Map<Object, T> pending = new LinkedHashMap<>();

    /** The rows of this write that PostgreSQL refused; several writers may share a table's name. */
    private final List<Refused> refusedHere = new ArrayList<>();

    /** Refused keys: whether their stand-in is written instead, or the row set aside. */
    private final Cache<Object, Boolean> refusedKeys =
        Caffeine.newBuilder().maximumSize(REMEMBERED_REFUSALS).build();

    private Rows(UpsertTable<T> table) {
      this.table = table;
    }

    /** Adds a row, replacing an earlier one of its key; returns whether the batch gained a key. */
    public boolean add(T row) {
      T toWrite = row;
      Boolean stoodIn =
          refusedKeys.estimatedSize() == 0
              ? null
              : refusedKeys.getIfPresent(table.key().apply(row));
      if (stoodIn != null) {
        if (!stoodIn) {
          setAside++;
          return false;
        }
        toWrite = table.standIn().apply(row);
      }
      return pending.put(table.key().apply(toWrite), toWrite) == null;
    }

    /**
     * Adds a row, in place of {@code merge} of an earlier one of its key and it when there is one;
     * returns whether the batch gained a key.
     */
    public boolean add(T row, BinaryOperator<T> merge) {
      T earlier = pending.get(table.key().apply(row));
      return add(earlier == null ? row : merge.apply(earlier, row));
    }

    /** Drops the pending rows that {@code unsent} selects; returns how many. */
    public int removeIf(Predicate<T> unsent) {
      int before = pending.size();
      pending.values().removeIf(unsent);
      return before - pending.size();
    }

    private void executeAll(Connection db) throws SQLException {
      execute(db, pending.values());
    }

    private void execute(Connection db, Iterable<T> rows) throws SQLException {
      try (PreparedStatement ps = db.prepareStatement(table.sql())) {
        boolean any = false;
        for (T row : rows) {
          table.binder().accept(ps, row);
          ps.addBatch();
          any = true;
        }
        if (any) {
          ps.executeBatch();
        }
      }
    }

    /** Writes the rows again, halving every refused part until each refused row stands alone. */
    private void isolate(Connection db, List<Refused> refused) throws SQLException {
      Deque<List<T>> parts = new ArrayDeque<>();
      parts.push(new ArrayList<>(pending.values()));
      while (!parts.isEmpty()) {
        List<T> part = parts.pop();
        SQLException refusal = tryWrite(db, part);
        if (refusal == null) {
          continue;
        }
        if (part.size() > 1) {
          int half = part.size() / 2;
          parts.push(part.subList(half, part.size()));
          parts.push(part.subList(0, half));
          continue;
        }
        T row = part.get(0);
        T standIn = table.standIn() == null ? null : table.standIn().apply(row);
        boolean stoodIn = standIn != null && tryWrite(db, List.of(standIn)) == null;
        Refused r = new Refused(table.name(), row, SqlFailures.describe(refusal), stoodIn);
        refused.add(r);
        refusedHere.add(r);
      }
    }

    /** Null when the rows were written, PostgreSQL's refusal when they were not. */
    private SQLException tryWrite(Connection db, List<T> rows) throws SQLException {
      Savepoint savepoint = db.setSavepoint();
      try {
        execute(db, rows);
        db.releaseSavepoint(savepoint);
        return null;
      } catch (SQLException e) {
        SQLException refusal = SqlFailures.refusedData(e);
        if (refusal == null) {
          throw e;
        }
        db.rollback(savepoint);
        return refusal;
      }
    }

    @SuppressWarnings("unchecked")
    private void commit() {
      for (Refused r : refusedHere) {
        refusedKeys.put(table.key().apply((T) r.row()), r.stoodIn());
      }
      refusedHere.clear();
      pending.clear();
    }
  }
}
