package cluster

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// bookieDefaults are the bridge's bookie settings, by ServerConfiguration's
// key. Each either makes the bookie small enough for a 2-core machine or
// takes a timer away from the outcome of a step:
var bookieDefaults = map[string]string{
	// DbLedgerStorage, Pulsar's storage (4.18's default class is
	// SortedLedgerStorage).
	"ledgerStorageClass": "org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage",
	// Small caches (the defaults are a quarter of the direct memory each).
	"dbStorage_writeCacheMaxSizeMb":     "16",
	"dbStorage_readAheadCacheMaxSizeMb": "16",
	"dbStorage_rocksDB_blockCacheSize":  "16777216",
	"journalPreAllocSizeMB":             "4",
	"journalWriteBufferSizeKB":          "64",
	// No checkpoint of the ledger index (fenced flag, master key) unless a
	// step asks for one: SyncThread's flushInterval, default 60 s, would
	// otherwise decide by the clock what survives a crash.
	"flushInterval": "86400000",
	// No garbage collection and no disk checker by the clock.
	"gcWaitTime":                      "86400000",
	"minorCompactionInterval":         "0",
	"majorCompactionInterval":         "0",
	"entryLocationCompactionInterval": "0",
	"diskCheckInterval":               "86400000",
	"diskUsageThreshold":              "0.999",
	"diskUsageWarnThreshold":          "0.998",
	"diskUsageLwmThreshold":           "0.997",
	// Loopback only.
	"allowLoopback":     "true",
	"advertisedAddress": "127.0.0.1",
	// No registration expires by a clock within a run: a stopped
	// bookie's lasts until Cluster.Unregister ends it (the ZooKeeper
	// server grants sessions this long: sessionMillis).
	"zkTimeout": strconv.Itoa(sessionMillis),
	// The admin HTTP server, for a garbage collection on demand.
	"httpServerEnabled":         "true",
	"httpServerClass":           "org.apache.bookkeeper.http.vertx.VertxHttpServer",
	"httpServerHost":            "127.0.0.1",
	"autoRecoveryDaemonEnabled": "false",
	"numAddWorkerThreads":       "1",
	"numReadWorkerThreads":      "1",
	"numJournalCallbackThreads": "1",
	"serverNumIOThreads":        "1",
}

// BookieConf is the bk_server.conf of a bookie listening on port (and its
// admin HTTP server on httpPort) with its
// journal and ledger directories under dir; settings override the
// bridge's defaults.
func BookieConf(port, httpPort int, dir, metadataURI string, settings map[string]string) string {
	kv := map[string]string{}
	for k, v := range bookieDefaults {
		kv[k] = v
	}
	kv["bookiePort"] = fmt.Sprint(port)
	kv["httpServerPort"] = fmt.Sprint(httpPort)
	kv["metadataServiceUri"] = metadataURI
	kv["journalDirectories"] = filepath.Join(dir, "journal")
	kv["ledgerDirectories"] = filepath.Join(dir, "ledgers")
	for k, v := range settings {
		kv[k] = v
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by bkcheck's bridge\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, kv[k])
	}
	return b.String()
}
