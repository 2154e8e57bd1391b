-- A longer SQLite workload for bench/overhead-valgrind.sh and
-- bench/cachegrind-agreement.sh (about a second natively, so that the
-- valgrind runs measure the steady state, not start-up): a 400000-row
-- table built through a B-tree index, a join, a GROUP BY, sorts, an update.
PRAGMA cache_size = -131072;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 400000)
INSERT INTO t SELECT i, (i * 7919) % 10007, printf('row-%08d', (i * 104729) % 1000003) FROM c;
CREATE INDEX t_k ON t(k);
CREATE TABLE u(k INTEGER PRIMARY KEY, w INTEGER);
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 10006)
INSERT INTO u SELECT i, (i * 31) % 101 FROM c;
SELECT count(*), sum(length(v)) FROM t;
SELECT u.w, count(*), max(t.v) FROM t JOIN u ON t.k = u.k GROUP BY u.w ORDER BY 2 DESC LIMIT 3;
SELECT k, count(*) FROM t WHERE k BETWEEN 100 AND 4000 GROUP BY k ORDER BY 2 DESC, 1 LIMIT 3;
SELECT v FROM t ORDER BY v LIMIT 1 OFFSET 200000;
UPDATE t SET v = upper(v) WHERE id % 3 = 0;
SELECT count(*) FROM t WHERE v GLOB 'ROW-*';
