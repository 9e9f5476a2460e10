package filetool

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// refWalk is walkFiles as it was before it read folders through scanDir,
// kept as the reference the walks must agree with: os.ReadDir, the
// ignore rules on whole paths, os.Stat for links.
func refWalk(ctx context.Context, start, root string, maxDepth int, fn walkFunc) error {
	relStart, stack, err := startIgnores(start, root)
	if err != nil {
		return err
	}
	var dir func(abs, topRel, rel string, depth int, stack ignoreStack, isStart bool) error
	dir = func(abs, topRel, rel string, depth int, stack ignoreStack, isStart bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := os.ReadDir(abs)
		if err != nil {
			if isStart {
				return err
			}
			return nil
		}
		slices.SortFunc(entries, func(a, b iofs.DirEntry) int {
			return compareEntryNames(a.Name(), a.IsDir(), b.Name(), b.IsDir())
		})
		for _, d := range entries {
			if d.Name() == ".gitignore" {
				if f := loadIgnore(filepath.Join(abs, ".gitignore"), topRel); f != nil {
					stack = append(stack[:len(stack):len(stack)], f)
				}
				break
			}
		}
		for _, d := range entries {
			name := d.Name()
			if name == ".git" {
				continue
			}
			entryTop, entryRel := join(topRel, name), join(rel, name)
			entryAbs := filepath.Join(abs, name)
			isDir := d.IsDir()
			if stack.ignored(entryTop, isDir) {
				continue
			}
			switch {
			case isDir:
				if maxDepth > 0 && depth+1 >= maxDepth {
					continue
				}
				if err := dir(entryAbs, entryTop, entryRel, depth+1, stack, false); err != nil {
					return err
				}
				continue
			case d.Type().IsRegular():
			case d.Type()&iofs.ModeSymlink != 0:
				st, err := os.Stat(entryAbs)
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
			default:
				continue
			}
			if err := fn(entryAbs, entryRel); err != nil {
				return err
			}
		}
		return nil
	}
	return dir(start, relStart, "", 0, stack, true)
}

// TestWalkMatchesReference checks that walkFiles yields the files of the
// reference walk, in its order, on random trees, the ignore tree, a start
// below the repository's top, limited depths, and the Go source tree.
func TestWalkMatchesReference(t *testing.T) {
	type start struct{ dir, root string }
	ign := ignoreTree(t)
	starts := []start{{ign, ign}, {filepath.Join(ign, "sub"), ign}}
	for seed := range uint64(12) {
		r := randomTree(t, seed)
		starts = append(starts, start{r, r})
	}
	if _, err := os.Stat(goSrc); err == nil {
		starts = append(starts, start{goSrc, goSrc})
	}
	for _, s := range starts {
		for _, depth := range []int{0, 1, 2} {
			var got, want []string
			collect := func(list *[]string) walkFunc {
				return func(abs, rel string) error {
					*list = append(*list, abs+" "+rel)
					return nil
				}
			}
			if err := walkFiles(t.Context(), s.dir, s.root, depth, collect(&got)); err != nil {
				t.Fatal(err)
			}
			if err := refWalk(t.Context(), s.dir, s.root, depth, collect(&want)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("walkFiles(%s, depth %d) = %d files; want %d; first difference: %s", s.dir, depth, len(got), len(want), firstDiff(got, want))
			}
		}
	}
}
