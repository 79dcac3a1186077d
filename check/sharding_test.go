package check

import (
	"os"
	"strings"
	"testing"
)

// TestShardingResolve: --shard i/N, and --shards N with the index from a
// Kubernetes Indexed Job or Slurm.
func TestShardingResolve(t *testing.T) {
	for _, env := range []string{"JOB_COMPLETION_INDEX", "SLURM_PROCID", "SLURM_NTASKS"} {
		t.Setenv(env, "")
	}
	cases := []struct {
		s        Sharding
		env      map[string]string
		i, n     int
		errMatch string
	}{
		{Sharding{}, nil, 0, 1, ""},
		{Sharding{Shard: "1/1"}, nil, 0, 1, ""},
		{Sharding{Shard: "3/4"}, nil, 2, 4, ""},
		{Sharding{Shard: "3/4", Shards: 4}, nil, 0, 0, "give one of them"},
		{Sharding{Shard: "3/4", Shards: 5}, nil, 0, 0, "give one of them"},
		{Sharding{Shard: "0/4"}, nil, 0, 0, "1 <= i <= N"},
		{Sharding{Shard: "5/4"}, nil, 0, 0, "1 <= i <= N"},
		{Sharding{Shard: "1/2x"}, nil, 0, 0, "1 <= i <= N"},
		{Sharding{Shards: 8}, map[string]string{"JOB_COMPLETION_INDEX": "7"}, 7, 8, ""},
		{Sharding{Shards: 8}, map[string]string{"JOB_COMPLETION_INDEX": "8"}, 0, 0, "not a shard index"},
		{Sharding{Shards: 4}, map[string]string{"SLURM_PROCID": "2", "SLURM_NTASKS": "4"}, 2, 4, ""},
		{Sharding{Shards: 4}, map[string]string{"SLURM_PROCID": "2", "SLURM_NTASKS": "5"}, 0, 0, "SLURM_NTASKS=5"},
		{Sharding{Shards: 4}, nil, 0, 0, "JOB_COMPLETION_INDEX or SLURM_PROCID"},
		{Sharding{Shards: -1}, nil, 0, 0, ">= 1"},
	}
	for _, c := range cases {
		t.Run(c.s.Shard+"/"+strings.Repeat("n", c.s.Shards&7), func(t *testing.T) {
			for _, env := range []string{"JOB_COMPLETION_INDEX", "SLURM_PROCID", "SLURM_NTASKS"} {
				if v, ok := c.env[env]; ok {
					t.Setenv(env, v)
				} else {
					unsetenv(t, env)
				}
			}
			i, n, err := c.s.Resolve()
			switch {
			case c.errMatch != "" && (err == nil || !strings.Contains(err.Error(), c.errMatch)):
				t.Errorf("%+v: error %v, want %q", c.s, err, c.errMatch)
			case c.errMatch == "" && (err != nil || i != c.i || n != c.n):
				t.Errorf("%+v: %d of %d, %v; want %d of %d", c.s, i, n, err, c.i, c.n)
			}
		})
	}
}

// unsetenv removes env for the test, restoring it afterwards.
func unsetenv(t *testing.T, env string) {
	t.Setenv(env, "") // registers the restore
	os.Unsetenv(env)
}
