package io.tally.counting.sql;

import java.io.Serializable;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.util.function.SerializableFunction;

/**
 * What a writer needs to know of one table it upserts rows into.
 *
 * @param name the table, as dead letters and reports name it
 * @param sql the upsert of one row
 * @param binder binds one row's parameters
 * @param key what identifies the row {@code sql} writes (its conflict target)
 * @param standIn the row that carries a refused row's clicks instead of it, or null when a refused
 *     row of this table is set aside whole ({@link
 *     io.tally.counting.records.DimensionCount#standIn})
 */
public record UpsertTable<T>(
    String name,
    String sql,
    JdbcStatementBuilder<T> binder,
    SerializableFunction<T, ?> key,
    SerializableFunction<T, T> standIn)
    implements Serializable {}
