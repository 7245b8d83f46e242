-- tests/e2e/60-corpus.t: sqlite3 reads this from standard input, on a
-- fresh database file: 50000 rows, an index, two aggregate queries.
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
INSERT INTO t(k, v) SELECT 'key' || (i * 7919 % 613), i FROM n;
CREATE INDEX t_k ON t(k);
SELECT count(*), count(DISTINCT k), sum(v) FROM t;
SELECT k, count(*), max(v) FROM t GROUP BY k ORDER BY count(*) DESC, k LIMIT 3;
