DROP TRIGGER IF EXISTS remstore_positions_foreign;
