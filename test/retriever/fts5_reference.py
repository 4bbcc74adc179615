#!/usr/bin/python3
# The independent reference for the retriever parity test: builds the SQLite FTS5 table maso's
# BM25 index reproduces and answers the same queries with SQLite's own bm25().
#
# Input (argv[1], JSON): {"docs": [[id, title, text], ...], "queries": [match, ...],
#                         "weights": [[title, text], ...], "k": int}
# Output (stdout, JSON): {"version": str,
#                         "hits": [per weight, per query: [[id, score], ...]],
#                         "terms": [[rowid, column, offset, term as latin-1 of its UTF-8 bytes], ...]}
import json
import sqlite3
import sys

job = json.load(open(sys.argv[1], encoding="utf-8"))
db = sqlite3.connect(":memory:")
db.text_factory = bytes  # a stemmed term may end inside a UTF-8 sequence
db.executescript(
    """
    CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, text, tokenize = 'porter unicode61');
    CREATE VIRTUAL TABLE terms USING fts5vocab(docs, 'instance');
    """
)
db.executemany("INSERT INTO docs (doc_id, title, text) VALUES (?, ?, ?)", job["docs"])
sql = (
    "SELECT doc_id, -bm25(docs, 0.0, ?, ?) FROM docs WHERE docs MATCH ? "
    "ORDER BY bm25(docs, 0.0, ?, ?) LIMIT ?"
)
hits = [
    [
        [[i.decode("utf-8"), s] for i, s in db.execute(sql, (t, x, q, t, x, job["k"]))]
        for q in job["queries"]
    ]
    for t, x in job["weights"]
]
cols = {b"title": 0, b"text": 1}
terms = [
    [doc, cols[col], off, term.decode("latin-1")]
    for term, doc, col, off in db.execute("SELECT term, doc, col, offset FROM terms ORDER BY doc, col, offset")
]
json.dump({"version": sqlite3.sqlite_version, "hits": hits, "terms": terms}, sys.stdout)
