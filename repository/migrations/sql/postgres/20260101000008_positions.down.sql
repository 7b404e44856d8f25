--include functions/store_batch_v2.sql
--bun:split
DROP TABLE IF EXISTS remstore_positions;
