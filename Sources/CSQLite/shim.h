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

// The WAL-index header's first 48 bytes (six words; `words` has room for eight, the last two
// are zeroed) and nBackfill (the u32 at byte 96), read with relaxed atomic loads as other
// connections write them.
static inline void csqlite_wal_words(const void *index, unsigned long long *words, unsigned int *backfill) {
    const unsigned long long *source = (const unsigned long long *)index;
    for (int i = 0; i < 6; i++) words[i] = __atomic_load_n(source + i, __ATOMIC_RELAXED);
    words[6] = 0;
    words[7] = 0;
    *backfill = __atomic_load_n((const unsigned int *)((const char *)index + 96), __ATOMIC_RELAXED);
}
