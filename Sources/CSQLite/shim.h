#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static const sqlite3_destructor_type csqlite_transient = (sqlite3_destructor_type)-1;

// The first region of this connection's own mapping of its WAL index (the -shm file), or NULL:
// asked of the VFS (xShmMap, without extending), so no second descriptor of the file is ever
// opened — closing one would drop every POSIX lock this process holds on it, SQLite's included.
// Valid while the connection stays open.
static inline const volatile void *csqlite_wal_index(sqlite3 *db) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods) return 0;
    if (file->pMethods->iVersion < 2 || !file->pMethods->xShmMap) return 0;
    volatile void *region = 0;
    if (file->pMethods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK) return 0;
    return region;
}
