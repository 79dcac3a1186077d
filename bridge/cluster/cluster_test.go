package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestRealStartFails: a cluster whose ZooKeeper cannot start fails with the
// end of ZooKeeper's log, and leaves no process behind.
func TestRealStartFails(t *testing.T) {
	testtier.Real(t)
	dir := t.TempDir()
	_, err := Start(context.Background(), Options{Classpath: filepath.Join(dir, "no-such-jar"), Bookies: 2, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "zookeeper exited before serving") || !strings.Contains(err.Error(), "ZooKeeperServerMain") {
		t.Fatalf("err %v, want ZooKeeper's failure with its log", err)
	}
	if left := Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

func TestBookieConf(t *testing.T) {
	conf := BookieConf(3181, 8080, "/d", "zk+hierarchical://127.0.0.1:2181/ledgers", map[string]string{"flushInterval": "1000"})
	for _, want := range []string{"bookiePort=3181\n", "httpServerPort=8080\n", "journalDirectories=/d/journal\n",
		"ledgerStorageClass=org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage\n", "flushInterval=1000\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
}
