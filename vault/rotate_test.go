package vault_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// seed stores n secrets over three tenants, some with two versions, and
// returns the value each (tenant, name) must resolve to.
func seed(t *testing.T, f *fixture, n int) map[[2]string]string {
	t.Helper()
	want := map[[2]string]string{}
	for i := range n {
		tenant := []string{"", "acme", "globex"}[i%3]
		name := fmt.Sprintf("s%03d", i)
		if i%4 == 0 {
			f.set(t, tenant, name, "old-"+name)
		}
		want[[2]string{tenant, name}] = fmt.Sprintf("%s-%s-%d", canary, name, i)
		f.set(t, tenant, name, want[[2]string{tenant, name}])
	}
	return want
}

func checkAll(ctx context.Context, v *vault.Vault, want map[[2]string]string) error {
	for k, w := range want {
		got, _, err := v.Get(ctx, k[0], k[1])
		if err != nil {
			return err
		}
		if string(got) != w {
			return fmt.Errorf("%s/%s: wrong value", k[0], k[1])
		}
	}
	return nil
}

func keyUsage(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	u, err := f.st.Secrets().KeyUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func fileRing(t *testing.T, f *fixture) *vault.KeyRing {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, vault.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	r, err := vault.ParseKeyRing(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRotateUnderConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	want := seed(t, f, 60)
	before, _ := f.v.Keys()
	oldID := before.Primary().ID

	// Readers are other vaults on the same store, as a running server is:
	// they hold the old ring and must pick up the new key from the file.
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 3 {
		reader := f.open()
		if err := reader.LoadKeys(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := checkAll(ctx, reader, want); err != nil {
					errs <- err
					return
				}
				reads.Add(1)
			}
		}()
	}
	// waitReads lets the readers finish at least one more pass over every
	// secret, so reads interleave with each batch.
	waitReads := func() {
		n := reads.Load()
		for deadline := time.Now().Add(10 * time.Second); reads.Load() <= n+1 && len(errs) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	var progress []vault.RotateProgress
	rep, err := f.v.Rotate(ctx, &vault.RotateOptions{BatchSize: 7, Progress: func(p vault.RotateProgress) {
		progress = append(progress, p)
		waitReads()
	}})
	waitReads() // and after the old key is retired
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a reader during rotation: %v", e)
	}
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range keyUsage(t, f) {
		total += n
	}
	if rep.NewKey == "" || rep.NewKey == oldID || rep.Primary != rep.NewKey || rep.Rewrapped != total || rep.Remaining != 0 {
		t.Fatalf("report %+v (rows %d)", rep, total)
	}
	if !slices.Equal(rep.Retired, []string{oldID}) || !slices.Equal(rep.Kept, []string{rep.NewKey}) {
		t.Fatalf("retired %v kept %v, want [%s] [%s]", rep.Retired, rep.Kept, oldID, rep.NewKey)
	}
	if len(progress) != (total+6)/7 || progress[len(progress)-1].Remaining != 0 {
		t.Fatalf("progress %+v over %d rows", progress, total)
	}
	if u := keyUsage(t, f); u[oldID] != 0 || u[rep.NewKey] != total {
		t.Fatalf("key usage after rotation: %v", u)
	}
	if r := fileRing(t, f); r.String() != rep.NewKey {
		t.Fatalf("key file holds %s, want only %s", r, rep.NewKey)
	}
	// A fresh process with only the new key reads everything, old versions too.
	fresh := f.open()
	if err := checkAll(ctx, fresh, want); err != nil {
		t.Fatal(err)
	}
	if got, _, err := fresh.GetVersion(ctx, "", "s000", 1); err != nil || string(got) != "old-s000" {
		t.Fatalf("old version after rotation: %q %v", got, err)
	}
	if strings.Contains(f.log.String(), canary) {
		t.Fatalf("the log shows a secret value:\n%s", f.log)
	}
}

func TestRotateResumesAfterInterruption(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	want := seed(t, f, 25)
	before, _ := f.v.Keys()
	oldID := before.Primary().ID

	// Stopped after two batches.
	rep, err := f.v.Rotate(ctx, &vault.RotateOptions{BatchSize: 5, MaxBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	newID := rep.NewKey
	if newID == "" || rep.Rewrapped != 10 || rep.Remaining == 0 || len(rep.Retired) != 0 {
		t.Fatalf("first run: %+v", rep)
	}
	if r := fileRing(t, f); r.String() != newID+","+oldID {
		t.Fatalf("key file mid-rotation: %s", r)
	}
	if err := checkAll(ctx, f.open(), want); err != nil {
		t.Fatalf("mid-rotation: %v", err)
	}
	// A secret set mid-rotation by another process is wrapped by the new key.
	if info, err := f.open().Set(ctx, "", "late", []byte(canary)); err != nil || info.KeyID != newID {
		t.Fatalf("set mid-rotation: %+v %v", info, err)
	}

	// Cancelled during the next run, after its first batch.
	cctx, cancel := context.WithCancel(ctx)
	rep, err = f.open().Rotate(cctx, &vault.RotateOptions{BatchSize: 5, Progress: func(vault.RotateProgress) { cancel() }})
	if !errors.Is(err, context.Canceled) || rep.NewKey != "" || rep.Primary != newID || rep.Rewrapped != 5 || rep.Remaining == 0 {
		t.Fatalf("cancelled run: %+v, %v", rep, err)
	}

	// The next run continues: no new key, the rest re-wrapped, the old key retired.
	rep, err = f.open().Rotate(ctx, &vault.RotateOptions{BatchSize: 5})
	if err != nil || rep.NewKey != "" || rep.Primary != newID || rep.Remaining != 0 || !slices.Equal(rep.Retired, []string{oldID}) {
		t.Fatalf("resumed run: %+v, %v", rep, err)
	}
	if u := keyUsage(t, f); len(u) != 1 || u[newID] == 0 {
		t.Fatalf("key usage: %v", u)
	}
	if r := fileRing(t, f); r.String() != newID {
		t.Fatalf("key file after rotation: %s", r)
	}
	if err := checkAll(ctx, f.open(), want); err != nil {
		t.Fatal(err)
	}

	// A further run is a new rotation.
	rep, err = f.open().Rotate(ctx, nil)
	if err != nil || rep.NewKey == "" || rep.NewKey == newID || !slices.Equal(rep.Retired, []string{newID}) {
		t.Fatalf("second rotation: %+v, %v", rep, err)
	}
}

func TestRotateWithMasterKeyFromEnvironment(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, _ := vault.NewKey()
	ring, _ := vault.NewKeyRing(k)
	fromEnv := func(value string) *vault.Vault {
		env := map[string]string{vault.EnvMasterKey: value}
		return vault.New(st.Secrets(), vault.SourceFromEnv(func(n string) string { return env[n] }, t.TempDir()), nil)
	}
	v := fromEnv(ring.EnvValue())
	for i := range 12 {
		if _, err := v.Set(ctx, "", fmt.Sprintf("s%d", i), []byte(fmt.Sprintf("%s-%d", canary, i))); err != nil {
			t.Fatal(err)
		}
	}

	// Step 1: a new key and the value to set; no row changes.
	rep, err := v.Rotate(ctx, nil)
	if err != nil || rep.NewKey == "" || rep.Rewrapped != 0 || rep.Remaining != 12 || rep.SetEnv == "" {
		t.Fatalf("step 1: %+v, %v", rep, err)
	}
	next, err := vault.ParseKeyRing(rep.SetEnv)
	if err != nil || next.String() != rep.NewKey+","+k.ID {
		t.Fatalf("value to set: ring %s, %v", next, err)
	}
	if u, _ := st.Secrets().KeyUsage(ctx); u[k.ID] != 12 {
		t.Fatalf("step 1 changed rows: %v", u)
	}

	// Step 2, with the new value: re-wrap, then name the key to drop.
	v = fromEnv(rep.SetEnv)
	rep2, err := v.Rotate(ctx, &vault.RotateOptions{BatchSize: 5})
	if err != nil || rep2.NewKey != "" || rep2.SetEnv != "" || rep2.Rewrapped != 12 || rep2.Remaining != 0 ||
		!slices.Equal(rep2.Retired, []string{k.ID}) || !slices.Equal(rep2.Kept, []string{rep.NewKey}) {
		t.Fatalf("step 2: %+v, %v", rep2, err)
	}

	// With the old key dropped, every secret still reads.
	only, _ := vault.NewKeyRing(next.Keys()[0])
	v = fromEnv(only.EnvValue())
	for i := range 12 {
		got, _, err := v.Get(ctx, "", fmt.Sprintf("s%d", i))
		if err != nil || string(got) != fmt.Sprintf("%s-%d", canary, i) {
			t.Fatalf("s%d after rotation: %v", i, err)
		}
	}
}
