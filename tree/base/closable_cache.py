"""diskcache's ``Cache`` with every thread's connection closed by ``close()`` or when dropped.

diskcache keeps a SQLite connection per thread and its ``close()`` closes only the calling
thread's: a server that closes a project from one thread left the connections its other threads had
opened (three descriptors each) until a full garbage collection. Its connections are also bound to
their thread, so no other thread could close them. Here ``_con`` opens them closable from any thread
and remembers them (``sqlite.ThreadConnections``); the rest is diskcache's. Imported only when the
query cache is first used (diskcache is not needed to open a memory).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref

import diskcache
from diskcache.core import DBNAME

from .sqlite import CLOSABLE, ThreadConnections


class ClosableCache(diskcache.Cache):
    def __init__(self, directory: str, **settings):
        self._conns = ThreadConnections()   # before diskcache's __init__, which connects
        weakref.finalize(self, self._conns.close)
        super().__init__(directory, **settings)

    @property
    def _con(self) -> sqlite3.Connection:
        # diskcache 5.6's own _con, but for the connection's arguments and its keeping in
        # self._conns; the process id is its check for a forked child, which must not use the
        # connection it inherited, nor close it (self._conns keeps it for ever there)
        if getattr(self._local, "pid", None) != os.getpid():
            self._local.con = None
            self._local.pid = os.getpid()
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._conns.keep(sqlite3.connect(
                os.path.join(self._directory, DBNAME), timeout=self._timeout, isolation_level=None, **CLOSABLE))
            # pragmas are per connection: diskcache reapplies those its Settings table holds
            try:
                settings = con.execute("SELECT key, value FROM Settings").fetchall()
            except sqlite3.OperationalError:
                pass
            else:
                for key, value in settings:
                    if key.startswith("sqlite_"):
                        self.reset(key, value, update=False)
        return con

    def close(self) -> None:
        """Close every thread's connection (each reopens at its next use)."""
        self._conns.close()
        self._local = threading.local()
