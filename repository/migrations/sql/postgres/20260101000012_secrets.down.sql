DROP TABLE IF EXISTS remstore_secrets;
