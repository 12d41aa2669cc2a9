// Verifies the bank's audit log with the Go project's own implementations of signed notes and
// transparency-log proofs (golang.org/x/mod/sumdb/note and sumdb/tlog), which the bank did not write.
//
// Input (JSON on stdin): the bank's verifier key, two checkpoints as signed notes (an older and a newer),
// one leaf hash with its index and inclusion proof in the newer tree, the consistency proof between the
// two trees, and the folder of the log's tiles (C2SP tlog-tiles), read through tlog's own tile reader,
// which checks every tile it reads against the newer signed root. Output: one line per check that passed;
// exit status 1 at the first that fails.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type input struct {
	Vkey        string   `json:"vkey"`
	OldNote     string   `json:"old_note"`
	NewNote     string   `json:"new_note"`
	LeafHash    string   `json:"leaf_hash"`
	Index       int64    `json:"index"`
	Inclusion   []string `json:"inclusion"`
	Consistency []string `json:"consistency"`
	Tiles       string   `json:"tiles"`
}

// tiles reads C2SP tlog-tiles from a folder: the layout of Go's sumdb tiles without their height element.
type tiles struct{ dir string }

func (t tiles) Height() int { return 8 }

func (t tiles) ReadTiles(wanted []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(wanted))
	for i, tile := range wanted {
		path := strings.TrimPrefix(tile.Path(), "tile/8/") // tile/8/L/N[.p/W] -> L/N[.p/W]
		data, err := os.ReadFile(filepath.Join(t.dir, "tile", filepath.FromSlash(path)))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (t tiles) SaveTiles([]tlog.Tile, [][]byte) {}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func hash(text string) tlog.Hash {
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(raw) != tlog.HashSize {
		fail("not a base64 hash: %q", text)
	}
	var h tlog.Hash
	copy(h[:], raw)
	return h
}

func hashes(texts []string) []tlog.Hash {
	out := make([]tlog.Hash, len(texts))
	for i, t := range texts {
		out[i] = hash(t)
	}
	return out
}

// open checks the note's signature by the bank's key (cosignatures of unknown keys are allowed) and
// reads its text as a C2SP checkpoint: origin, tree size and base64 root hash, one a line.
func open(verifiers note.Verifiers, text string) checkpoint {
	n, err := note.Open([]byte(text), verifiers)
	if err != nil {
		fail("note not verified: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		fail("not a checkpoint: %q", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("not a tree size: %q", lines[1])
	}
	fmt.Printf("note signed by %s: %s, tree of %d\n", n.Sigs[0].Name, lines[0], size)
	return checkpoint{lines[0], size, hash(lines[2])}
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail("bad input: %v", err)
	}
	verifier, err := note.NewVerifier(in.Vkey)
	if err != nil {
		fail("bad verifier key: %v", err)
	}
	verifiers := note.VerifierList(verifier)
	older, newer := open(verifiers, in.OldNote), open(verifiers, in.NewNote)
	if older.origin != newer.origin {
		fail("two origins: %q and %q", older.origin, newer.origin)
	}
	if err := tlog.CheckRecord(hashes(in.Inclusion), newer.size, newer.root, in.Index, hash(in.LeafHash)); err != nil {
		fail("inclusion proof not verified: %v", err)
	}
	fmt.Printf("leaf %d included in the tree of %d\n", in.Index, newer.size)
	if err := tlog.CheckTree(hashes(in.Consistency), newer.size, newer.root, older.size, older.root); err != nil {
		fail("consistency proof not verified: %v", err)
	}
	fmt.Printf("tree of %d consistent with the tree of %d\n", older.size, newer.size)
	// The tiles: a proof made from them alone, each tile checked against the signed root as it is read.
	reader := tlog.TileHashReader(tlog.Tree{N: newer.size, Hash: newer.root}, tiles{in.Tiles})
	for _, index := range []int64{0, in.Index, newer.size - 1} {
		proof, err := tlog.ProveRecord(newer.size, index, reader)
		if err != nil {
			fail("tiles not verified: %v", err)
		}
		leaf, err := reader.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
		if err != nil {
			fail("tiles not verified: %v", err)
		}
		if err := tlog.CheckRecord(proof, newer.size, newer.root, index, leaf[0]); err != nil {
			fail("tiles not verified: %v", err)
		}
	}
	fmt.Printf("tiles of %d leaves verified against the tree of %d\n", newer.size, newer.size)
}
