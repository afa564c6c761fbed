package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// hfArch is one Hugging Face architecture routesim reads: the defaults of
// its transformers config class for the fields a config may leave out
// (transformers @ 008e5743, src/transformers/models/<type>/
// configuration_<type>.py; Gemma 3 @ 008f5c8c), and how its layers
// attend.
type hfArch struct {
	modelType string
	// kvHeads and headDim are the class defaults of num_key_value_heads
	// and head_dim; 0 is the class's None, which __post_init__ turns into
	// num_attention_heads and hidden_size / num_attention_heads.
	kvHeads, headDim int
	maxPositions     int
	tied, qkNorm     bool
	// window is the class default of sliding_window; slide says which
	// layers use it: "all", "alternate" (Gemma 2: every other layer),
	// "pattern" (Gemma 3: all but every sliding_window_pattern-th, 6 by
	// default), "upper" (Qwen: with use_sliding_window, the layers from
	// max_window_layers, 28 by default, on); "" none.
	window int
	slide  string
	// text is the sub-object holding the language model's fields
	// (Gemma 3's multimodal config: text_config), whose omitted fields
	// are the text config class's defaults (it is saved as a diff).
	text     string
	defaults *hfFields
	// moe names a Mixture-of-Experts config's expert fields: the count of
	// routed experts and the width of one (Mixtral's experts are
	// intermediate_size wide); shared says it has a shared expert; refuse
	// says routesim cannot model its attention (MLA).
	moe                 bool
	experts, expertSize string
	shared, refuse      bool
}

// hfFields are the config fields routesim reads.
type hfFields struct {
	Hidden, Layers, Heads, Intermediate, Vocab int
}

// hfArchs are the architectures routesim reads, by their name in
// config.json's "architectures".
var hfArchs = map[string]hfArch{
	// LlamaConfig: num_key_value_heads None → heads, head_dim None →
	// hidden/heads, max_position_embeddings 2048, untied.
	"LlamaForCausalLM": {modelType: "llama", maxPositions: 2048},
	// Qwen2Config: num_key_value_heads 32, no head_dim (Qwen2Attention
	// takes hidden/heads), 32768 positions; sliding windows only with
	// use_sliding_window, on layers ≥ max_window_layers.
	"Qwen2ForCausalLM": {modelType: "qwen2", kvHeads: 32, maxPositions: 32768, window: 4096, slide: "upper"},
	// Qwen3Config: as Qwen2 with head_dim 128 and q/k norms.
	"Qwen3ForCausalLM": {modelType: "qwen3", kvHeads: 32, headDim: 128, maxPositions: 32768, qkNorm: true, window: 4096, slide: "upper"},
	// MistralConfig: num_key_value_heads 8, head_dim None → hidden/heads,
	// 4096·32 positions, sliding_window 4096 on every layer (null: none).
	"MistralForCausalLM": {modelType: "mistral", kvHeads: 8, maxPositions: 4096 * 32, window: 4096, slide: "all"},
	// GemmaConfig: 16 KV heads, head_dim 256, 8192 positions, tied.
	"GemmaForCausalLM": {modelType: "gemma", kvHeads: 16, headDim: 256, maxPositions: 8192, tied: true},
	// Gemma2Config: 4 KV heads, head_dim 256, 8192 positions, tied,
	// sliding_window 4096 on every other layer (layer_types).
	"Gemma2ForCausalLM": {modelType: "gemma2", kvHeads: 4, headDim: 256, maxPositions: 8192, tied: true, window: 4096, slide: "alternate"},
	// Gemma3TextConfig: 4 KV heads, head_dim 256, 131072 positions, tied,
	// q/k norms, sliding_window 4096 on 5 of every sliding_window_pattern
	// (6) layers.
	"Gemma3ForCausalLM": {modelType: "gemma3_text", kvHeads: 4, headDim: 256, maxPositions: 131072, tied: true, qkNorm: true, window: 4096, slide: "pattern"},
	"Gemma3ForConditionalGeneration": {modelType: "gemma3", kvHeads: 4, headDim: 256, maxPositions: 131072, tied: true, qkNorm: true, window: 4096, slide: "pattern",
		text: "text_config", defaults: &hfFields{Hidden: 2304, Layers: 26, Heads: 8, Intermediate: 9216, Vocab: 262208}},
	// MixtralConfig: 8 KV heads, head_dim None → hidden/heads, 4096·32
	// positions, sliding_window None; every layer sparse, experts
	// intermediate_size wide (num_local_experts, num_experts_per_tok).
	"MixtralForCausalLM": {modelType: "mixtral", kvHeads: 8, maxPositions: 4096 * 32, slide: "all",
		moe: true, experts: "num_local_experts", expertSize: "intermediate_size"},
	// Qwen2MoeConfig: 16 KV heads, 32768 positions, num_experts routed
	// experts of moe_intermediate_size and a shared expert of
	// shared_expert_intermediate_size; sparse layers by
	// decoder_sparse_step and mlp_only_layers (the decoder layer's rule in
	// modeling_qwen2_moe.py), intermediate_size for the dense ones.
	"Qwen2MoeForCausalLM": {modelType: "qwen2_moe", kvHeads: 16, maxPositions: 32768, window: 4096, slide: "qwen2moe",
		moe: true, experts: "num_experts", expertSize: "moe_intermediate_size", shared: true},
	// Qwen3MoeConfig: 4 KV heads, no head_dim attribute (the attention
	// takes the config's, else hidden/heads), 32768 positions, q/k norms;
	// experts as Qwen2-MoE without the shared one.
	"Qwen3MoeForCausalLM": {modelType: "qwen3_moe", kvHeads: 4, maxPositions: 32768, qkNorm: true, window: 4096, slide: "upper",
		moe: true, experts: "num_experts", expertSize: "moe_intermediate_size"},
	// DeepSeek-V3: multi-head latent attention, which the KV and attention
	// terms do not model.
	"DeepseekV3ForCausalLM": {modelType: "deepseek_v3", moe: true, refuse: true},
}

// HFArchitectures lists the Hugging Face architectures ReadHFConfig maps
// to a model shape.
func HFArchitectures() []string {
	var out []string
	for name, a := range hfArchs {
		if !a.refuse {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Bounds on a config's sizes: past them it is no language model routesim
// can serve (or a typing mistake).
const (
	maxHFLayers    = 1000
	maxHFWidth     = 1 << 17 // hidden, intermediate
	maxHFHeads     = 1024
	maxHFVocab     = 1 << 22
	maxHFPositions = 1 << 24
)

var hfIDPattern = regexp.MustCompile(`^[A-Za-z0-9][\w.-]*/[\w.-]+$`)

// ReadHFConfig reads a Hugging Face config.json (at most
// inputerr.MaxSmallFile bytes) into the model shape the cost model uses,
// for the dense architectures of HFArchitectures. Errors name the file,
// the line and the field ("config.json: hidden_size: missing"); a field a
// config may leave out takes its transformers config class's default
// (hfArchs), and the size fields no saved config leaves out (hidden,
// layers, heads, intermediate, vocab) are required. The model is named
// after the config's folder; a shape equal to a catalogue model's takes
// that model's name (its measured profiles apply: step times depend on
// the shape alone), and a folder named like a catalogue model with
// another shape gets "-custom". Notes says what was defaulted and what
// the cost model ignores (sliding windows, quantisation).
func ReadHFConfig(r io.Reader, file string, cat *Catalogue) (LLM, error) {
	b, err := inputerr.ReadAll(r, file, inputerr.MaxSmallFile)
	if err != nil {
		return LLM{}, err
	}
	keys, err := inputerr.ScanJSONKeys(file, b)
	if err != nil {
		return LLM{}, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return LLM{}, inputerr.JSONDecodeError(keys, b, err)
	}
	arch, name, err := hfArchOf(keys, top)
	if err != nil {
		return LLM{}, err
	}
	if arch.refuse {
		return LLM{}, inputerr.Errorf(file, keys.Line("architectures"), "architectures", "%s%s uses multi-head latent attention, which routesim's KV and attention terms do not model; it reads: %s",
			name, moeCounts(top), strings.Join(HFArchitectures(), ", "))
	}
	h := &hfReader{file: file, keys: keys, top: top, obj: top}
	if arch.text != "" {
		h.prefix = arch.text + "."
		h.obj = map[string]json.RawMessage{}
		if raw, ok := top[arch.text]; ok {
			if err := json.Unmarshal(raw, &h.obj); err != nil {
				return LLM{}, inputerr.Errorf(file, keys.Line(arch.text), arch.text, "not a JSON object")
			}
		}
	}
	m := h.shape(arch)
	if len(h.errs) > 0 {
		return LLM{}, errors.Join(h.errs...)
	}
	m.File = file
	m.Sources = "Hugging Face config " + file + " (" + name + ")"
	m.Notes = append(h.notes, h.extras(arch, m)...)
	if len(h.errs) > 0 {
		return LLM{}, errors.Join(h.errs...)
	}
	m.Name = hfModelName(file)
	if id, ok := h.str("_name_or_path"); ok && hfIDPattern.MatchString(id) {
		m.HFID = id
	}
	nameAfterCatalogue(&m, cat)
	return m, nil
}

// hfArchOf is the config's architecture: its first "architectures"
// entry, else its "model_type".
func hfArchOf(keys *inputerr.JSONKeys, top map[string]json.RawMessage) (hfArch, string, error) {
	file := keys.File
	var list []string
	if raw, ok := top["architectures"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
			return hfArch{}, "", inputerr.Errorf(file, keys.Line("architectures"), "architectures", "%s is not a list of architecture names", raw)
		}
		a, ok := hfArchs[list[0]]
		if !ok {
			return hfArch{}, "", inputerr.Errorf(file, keys.Line("architectures"), "architectures", "%q is not an architecture routesim reads%s (it reads: %s)",
				list[0], didYouMean(list[0], HFArchitectures()), strings.Join(HFArchitectures(), ", "))
		}
		return a, list[0], nil
	}
	var mt string
	if raw, ok := top["model_type"]; ok {
		if err := json.Unmarshal(raw, &mt); err != nil {
			return hfArch{}, "", inputerr.Errorf(file, keys.Line("model_type"), "model_type", "%s is not a string", raw)
		}
		for name, a := range hfArchs {
			if a.modelType == mt {
				return a, name, nil
			}
		}
		return hfArch{}, "", inputerr.Errorf(file, keys.Line("model_type"), "model_type", "%q is not a model type routesim reads (it reads the architectures %s)", mt, strings.Join(HFArchitectures(), ", "))
	}
	return hfArch{}, "", inputerr.Errorf(file, 0, "architectures", "missing (and no model_type): a Hugging Face config.json names its architecture")
}

// moeCounts is ", N experts, K active per token" where the config says.
func moeCounts(top map[string]json.RawMessage) string {
	var n, k int
	for _, f := range []string{"num_local_experts", "num_experts", "n_routed_experts"} {
		if raw, ok := top[f]; ok && json.Unmarshal(raw, &n) == nil {
			break
		}
	}
	if raw, ok := top["num_experts_per_tok"]; ok {
		_ = json.Unmarshal(raw, &k)
	}
	if n > 0 && k > 0 {
		return fmt.Sprintf(" (%d experts, %d active per token)", n, k)
	}
	return ""
}

// hfReader reads the fields of one config object, collecting positioned
// errors and notes.
type hfReader struct {
	file   string
	keys   *inputerr.JSONKeys
	top    map[string]json.RawMessage // the whole config
	obj    map[string]json.RawMessage // the language model's fields
	prefix string                     // path of obj in the file ("text_config.")
	errs   []error
	notes  []string
}

func (h *hfReader) bad(field, format string, a ...any) {
	h.errs = append(h.errs, inputerr.Errorf(h.file, h.keys.Line(h.prefix+field), h.prefix+field, format, a...))
}

// raw is field's value; ok false if absent or null.
func (h *hfReader) raw(field string) (json.RawMessage, bool) {
	v, ok := h.obj[field]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// int reads a positive integer field in [1, hi]; def > 0 is used (with a
// note saying whose default it is) when the field is absent or null, def
// 0 makes it required.
func (h *hfReader) int(field string, hi, def int, why string) int {
	v, ok := h.raw(field)
	if !ok {
		if def > 0 {
			if why != "" {
				h.notes = append(h.notes, fmt.Sprintf("%s%s absent: %d (%s)", h.prefix, field, def, why))
			}
			return def
		}
		h.errs = append(h.errs, inputerr.Errorf(h.file, h.keys.Line(h.prefix+field), h.prefix+field, "missing"))
		return 0
	}
	var n int
	if err := json.Unmarshal(v, &n); err != nil {
		h.bad(field, "%s is not a whole number", v)
		return 0
	}
	if n < 1 || n > hi {
		h.bad(field, "%d must be in [1, %d]", n, hi)
		return 0
	}
	return n
}

func (h *hfReader) bool(field string, def bool) bool {
	v, ok := h.raw(field)
	if !ok {
		return def
	}
	var x bool
	if err := json.Unmarshal(v, &x); err != nil {
		h.bad(field, "%s is not true or false", v)
	}
	return x
}

// str reads a string field of the whole config (the top level).
func (h *hfReader) str(field string) (string, bool) {
	v, ok := h.top[field]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// shape reads the fields of the model shape.
func (h *hfReader) shape(a hfArch) LLM {
	d, why := hfFields{}, ""
	if a.defaults != nil {
		d, why = *a.defaults, a.modelType+"'s text config class default: a saved multimodal config keeps only what differs from it"
	}
	m := LLM{
		Hidden:       h.int("hidden_size", maxHFWidth, d.Hidden, why),
		Layers:       h.int("num_hidden_layers", maxHFLayers, d.Layers, why),
		Heads:        h.int("num_attention_heads", maxHFHeads, d.Heads, why),
		Intermediate: h.int("intermediate_size", maxHFWidth, d.Intermediate, why),
		Vocab:        h.int("vocab_size", maxHFVocab, d.Vocab, why),
		TiedEmbed:    h.bool("tie_word_embeddings", a.tied),
		QKNorm:       a.qkNorm,
	}
	if m.Heads == 0 || m.Hidden == 0 {
		return m
	}
	kv, kvWhy := a.kvHeads, a.modelType+" config class default"
	if kv == 0 {
		kv, kvWhy = m.Heads, "the config class sets num_attention_heads when it is None"
	}
	if _, given := h.obj["num_key_value_heads"]; given {
		if _, ok := h.raw("num_key_value_heads"); !ok { // null: every class takes the heads
			kv, kvWhy = m.Heads, "null: the config class sets num_attention_heads"
		}
	}
	m.KVHeads = h.int("num_key_value_heads", m.Heads, kv, kvWhy)
	if m.KVHeads > 0 && m.Heads%m.KVHeads != 0 {
		h.bad("num_key_value_heads", "%d does not divide num_attention_heads %d", m.KVHeads, m.Heads)
	}
	hd, hdWhy := a.headDim, a.modelType+" config class default"
	if hd == 0 {
		hd, hdWhy = m.Hidden/m.Heads, "hidden_size / num_attention_heads, as the config class and attention layer take it"
	}
	m.HeadDim = h.int("head_dim", 4096, max(hd, 1), hdWhy)
	m.MaxPositions = h.int("max_position_embeddings", maxHFPositions, a.maxPositions, a.modelType+" config class default")
	if a.moe {
		h.experts(a, &m)
	}
	return m
}

// experts reads a Mixture-of-Experts config's expert fields into m.
func (h *hfReader) experts(a hfArch, m *LLM) {
	m.Experts = h.int(a.experts, 1<<16, 0, "")
	m.ActiveExperts = h.int("num_experts_per_tok", 1<<16, 0, "")
	m.ExpertIntermediate = h.int(a.expertSize, maxHFWidth, 0, "")
	if a.shared {
		m.SharedExpertIntermediate = h.int("shared_expert_intermediate_size", maxHFWidth, 0, "")
	}
	if m.Experts > 0 && m.ActiveExperts > m.Experts {
		h.bad("num_experts_per_tok", "%d exceeds %s %d", m.ActiveExperts, a.experts, m.Experts)
	}
	m.MoELayers = m.Layers
	if a.expertSize == "moe_intermediate_size" {
		// modeling_qwen2_moe.py / modeling_qwen3_moe.py: layer i is
		// sparse unless listed in mlp_only_layers, and only every
		// decoder_sparse_step-th.
		step := h.int("decoder_sparse_step", maxHFLayers, 1, "")
		var only []int
		if v, ok := h.raw("mlp_only_layers"); ok && json.Unmarshal(v, &only) != nil {
			h.bad("mlp_only_layers", "%s is not a list of layer numbers", v)
		}
		dense := map[int]bool{}
		for _, i := range only {
			dense[i] = true
		}
		m.MoELayers = 0
		for i := 0; i < m.Layers && step > 0; i++ {
			if !dense[i] && (i+1)%step == 0 {
				m.MoELayers++
			}
		}
	}
	if m.Experts == 0 || m.ActiveExperts == 0 || m.ExpertIntermediate == 0 || m.MoELayers == 0 {
		return
	}
	shared := ""
	if m.SharedExpertIntermediate > 0 {
		shared = fmt.Sprintf(" and a shared expert of %d", m.SharedExpertIntermediate)
	}
	h.notes = append(h.notes, fmt.Sprintf("Mixture-of-Experts: %d routed experts of %d, %d per token, on %d of %d layers%s: the weights in memory hold every expert (%.2f B parameters), a token computes with %.2f B; a step reads the experts its tokens touch, E·(1 − (1 − K/E)^T) per layer for T tokens routed uniformly (skewed routing touches fewer), at most all of them; experts are split over the TP group (no expert parallelism)",
		m.Experts, m.ExpertIntermediate, m.ActiveExperts, m.MoELayers, m.Layers, shared, float64(m.Params())/1e9, float64(m.ActiveParams())/1e9))
}

// extras checks the weights' precision and says what the cost model
// ignores: sliding windows and quantisation schemes other than FP8.
func (h *hfReader) extras(a hfArch, m LLM) []string {
	var notes []string
	dtype, ok := h.str("torch_dtype")
	if !ok {
		dtype, ok = h.str("dtype")
	}
	switch {
	case !ok:
		notes = append(notes, "torch_dtype absent: 16-bit weights assumed (vLLM's dtype auto)")
	case dtype == "bfloat16" || dtype == "float16":
	case dtype == "float32":
		notes = append(notes, "torch_dtype float32: vLLM's dtype auto serves float32 checkpoints in 16 bits, as modelled")
	default:
		h.bad("torch_dtype", "%q: routesim models 16-bit (bfloat16, float16) and FP8 weights", dtype)
	}
	if raw, ok := h.raw("quantization_config"); ok {
		var q struct {
			Method string `json:"quant_method"`
		}
		_ = json.Unmarshal(raw, &q)
		if strings.EqualFold(q.Method, "fp8") {
			notes = append(notes, "quantization_config fp8: run it with --quant fp8 (linear layers in one byte, embeddings and lm_head in 16 bits)")
		} else {
			notes = append(notes, fmt.Sprintf("quantization_config %q: routesim models 16-bit and FP8 weights only; with --quant bf16 the weights' bytes are over-stated", q.Method))
		}
	}
	if a.slide == "" {
		return notes
	}
	window, on := a.window, 0
	if raw, present := h.obj["sliding_window"]; present {
		if string(raw) == "null" {
			window = 0
		} else if json.Unmarshal(raw, &window) != nil || window < 0 {
			h.bad("sliding_window", "%s is not a whole number ≥ 0", raw)
			return notes
		}
	}
	switch a.slide {
	case "all":
		on = m.Layers
	case "alternate":
		on = (m.Layers + 1) / 2 // layer i slides when i+1 is odd
	case "pattern":
		on = m.Layers - m.Layers/h.int("sliding_window_pattern", maxHFLayers, 6, "")
	case "upper":
		if h.bool("use_sliding_window", false) {
			on = max(0, m.Layers-h.int("max_window_layers", maxHFLayers, 28, ""))
		}
	case "qwen2moe": // Qwen2MoeConfig: odd-numbered layers below max_window_layers
		if h.bool("use_sliding_window", false) {
			for i, below := 0, h.int("max_window_layers", maxHFLayers, 28, ""); i < m.Layers; i++ {
				if (i+1)%2 == 1 && i < below {
					on++
				}
			}
		}
	}
	if v, ok := h.raw("layer_types"); ok {
		// Newer configs list each layer's attention: that list decides.
		var types []string
		if json.Unmarshal(v, &types) != nil || len(types) != m.Layers {
			h.bad("layer_types", "want a list of %d layer types (num_hidden_layers)", m.Layers)
			return notes
		}
		on = 0
		for _, t := range types {
			if t == "sliding_attention" {
				on++
			}
		}
	}
	if window > 0 && on > 0 {
		notes = append(notes, fmt.Sprintf("sliding_window %d on %d of %d layers ignored: the KV cost model keeps every layer's KV for the whole context, so past %d tokens KV memory and decode KV reads are over-stated (vLLM keeps only the window for those layers)",
			window, on, m.Layers, window))
	}
	return notes
}

// hfModelName names a model read from file: its folder for a
// config.json, else the file's name without .json.
func hfModelName(file string) string {
	base := filepath.Base(file)
	if strings.EqualFold(base, "config.json") {
		if dir := filepath.Base(filepath.Dir(file)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
		return "model"
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// sameShape says whether a and b cost the same to run: every field the
// cost model reads but the context limit.
func sameShape(a, b LLM) bool {
	return a.Layers == b.Layers && a.Hidden == b.Hidden && a.Intermediate == b.Intermediate && a.Heads == b.Heads &&
		a.KVHeads == b.KVHeads && a.HeadDim == b.HeadDim && a.Vocab == b.Vocab && a.TiedEmbed == b.TiedEmbed && a.QKNorm == b.QKNorm &&
		a.Experts == b.Experts && a.ActiveExperts == b.ActiveExperts && a.ExpertIntermediate == b.ExpertIntermediate &&
		a.SharedExpertIntermediate == b.SharedExpertIntermediate && a.MoELayers == b.MoELayers
}

// nameAfterCatalogue gives m a catalogue model's name if it has that
// model's shape, and "-custom" if it is named like one but differs.
func nameAfterCatalogue(m *LLM, cat *Catalogue) {
	for _, c := range cat.Models {
		if sameShape(*m, c) {
			m.Notes = append(m.Notes, fmt.Sprintf("the shape of the catalogue's %s: runs as it (step times depend on the shape alone, so its measured profiles apply)", c.Name))
			m.Name, m.HFID = c.Name, c.HFID
			return
		}
	}
	for _, c := range cat.Models {
		if strings.EqualFold(c.Name, m.Name) || strings.EqualFold(c.HFID, m.Name) {
			m.Notes = append(m.Notes, fmt.Sprintf("named like the catalogue's %s but shaped differently: called %s-custom so that none of its measured profiles applies", c.Name, m.Name))
			m.Name += "-custom"
			return
		}
	}
}
