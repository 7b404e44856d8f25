DROP TRIGGER IF EXISTS remstore_order_foreign ON messages;
--bun:split
DROP FUNCTION IF EXISTS remstore_order_foreign_row();
