DROP INDEX IF EXISTS remstore_messages_search;
