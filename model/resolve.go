package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IsFileArg says whether a --gpu or --model argument names a file rather
// than a catalogue entry: it ends in .json or contains a path separator.
func IsFileArg(arg string) bool {
	return strings.HasSuffix(strings.ToLower(arg), ".json") || strings.ContainsAny(arg, `/\`) || strings.ContainsRune(arg, filepath.Separator)
}

// LoadGPU resolves a --gpu argument: a GPU file (IsFileArg; ReadGPU) or a
// catalogue name (Catalogue.GPU).
func (c *Catalogue) LoadGPU(arg string) (GPU, error) {
	if !IsFileArg(arg) {
		return c.GPU(arg)
	}
	f, err := os.Open(arg)
	if err != nil {
		return GPU{}, err
	}
	defer f.Close()
	return ReadGPU(f, arg, c)
}

// LoadModel resolves a --model argument: a catalogue name or Hugging Face
// id (Catalogue.Model), else a Hugging Face config.json or a folder
// holding one (ReadHFConfig) when the argument looks like a file
// (IsFileArg) or is a folder.
func (c *Catalogue) LoadModel(arg string) (LLM, error) {
	m, err := c.Model(arg)
	if err == nil {
		return m, nil
	}
	st, serr := os.Stat(arg)
	if !IsFileArg(arg) && (serr != nil || !st.IsDir()) {
		return LLM{}, err
	}
	path := arg
	if serr == nil && st.IsDir() {
		path = filepath.Join(arg, "config.json")
	}
	f, err := os.Open(path)
	if err != nil {
		if serr == nil && st.IsDir() {
			return LLM{}, fmt.Errorf("%s: a model folder must hold a Hugging Face config.json: %w", arg, err)
		}
		return LLM{}, err
	}
	defer f.Close()
	return ReadHFConfig(f, path, c)
}

// IsCatalogueModel says whether arg names a catalogue model (by name or
// Hugging Face id), not a file.
func (c *Catalogue) IsCatalogueModel(arg string) bool {
	_, err := c.Model(arg)
	return err == nil
}
