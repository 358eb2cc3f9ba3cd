"""The document library: SQLite store, hashing and ingest, uploads."""
