DROP TABLE IF EXISTS remstore_positions;
