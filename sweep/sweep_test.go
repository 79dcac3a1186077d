package sweep

import (
	"os"
	"strings"
	"testing"
)

// TestResolveShard: --shard i/n, and the slice from a Kubernetes Indexed
// Job (with --shards n) or a Slurm job array, through check's resolver.
func TestResolveShard(t *testing.T) {
	vars := []string{"JOB_COMPLETION_INDEX", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"}
	cases := []struct {
		shard    string
		shards   int
		env      map[string]string
		want     Shard
		errMatch string
	}{
		{"", 0, nil, Shard{1, 1}, ""},
		{"2/3", 0, nil, Shard{2, 3}, ""},
		{"2/3", 4, nil, Shard{}, "give one of them"},
		{"1/3x", 0, nil, Shard{}, "1 <= i <= N"},
		{"4/3", 0, nil, Shard{}, "1 <= i <= N"},
		{"", 4, map[string]string{"JOB_COMPLETION_INDEX": "3"}, Shard{4, 4}, ""},
		{"", 4, map[string]string{"JOB_COMPLETION_INDEX": "4"}, Shard{}, "not a shard index below 4"},
		{"", 0, map[string]string{"JOB_COMPLETION_INDEX": "3"}, Shard{1, 1}, ""},
		{"", 0, map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, Shard{1, 1}, ""},
		{"", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"}, Shard{2, 3}, ""},
		{"", 3, map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, Shard{2, 3}, ""},
		{"", 4, map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, Shard{}, "but --shards 4"},
		{"", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, Shard{}, "not a slice of 3"},
		{"", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, Shard{}, "needs --shards"},
		{"", 2, nil, Shard{}, "JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID"},
		{"", -1, nil, Shard{}, ">= 1"},
	}
	for _, c := range cases {
		for _, v := range vars {
			t.Setenv(v, "") // restored after the test
			if x, ok := c.env[v]; ok {
				os.Setenv(v, x)
			} else {
				os.Unsetenv(v)
			}
		}
		got, err := ResolveShard(c.shard, c.shards)
		switch {
		case c.errMatch != "" && (err == nil || !strings.Contains(err.Error(), c.errMatch)):
			t.Errorf("%q %d %v: error %v, want %q", c.shard, c.shards, c.env, err, c.errMatch)
		case c.errMatch == "" && (err != nil || got != c.want):
			t.Errorf("%q %d %v: %v, %v; want %v", c.shard, c.shards, c.env, got, err, c.want)
		}
	}
}
