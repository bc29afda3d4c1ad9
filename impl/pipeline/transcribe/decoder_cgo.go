//go:build cgo

package transcribe

// The C part is kept to the two calls cgo cannot make directly or that are
// cheaper as one crossing. It targets the API Debian ships
// (0.8+5prealpha: cmd_ln_t configuration, ps_get_hyp with a score pointer),
// not the 5.x API (ps_config_t).

/*
#cgo pkg-config: pocketsphinx
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>

// strata_ps_new loads a decoder. It exists because cmd_ln_init is variadic,
// which cgo cannot call.
//
// Logging is switched off with err_set_logfp(NULL), the way err.h documents,
// rather than with "-logfn /dev/null": that option makes every ps_init fopen a
// new FILE and fclose the previous process-wide one, which races with any
// other decoder logging to it. Logging is process-wide either way and nothing
// else in Strata uses sphinxbase.
static ps_decoder_t *strata_ps_new(const char *hmm, const char *lm, const char *dict) {
	err_set_logfp(NULL);
	cmd_ln_t *cfg = cmd_ln_init(NULL, ps_args(), TRUE,
		"-hmm", hmm, "-lm", lm, "-dict", dict, NULL);
	if (cfg == NULL)
		return NULL;
	ps_decoder_t *ps = ps_init(cfg);
	cmd_ln_free_r(cfg); // ps_init keeps its own reference
	return ps;
}

// strata_ps_decode decodes n samples as one utterance: full_utt=TRUE lets the
// front end normalise over the whole clip. It returns the hypothesis, owned by
// the decoder and valid until its next call, or NULL: with *step 0 when
// nothing was recognised, or the number of the call that failed.
static const char *strata_ps_decode(ps_decoder_t *ps, const int16 *pcm, size_t n, int *step) {
	int32 score;
	*step = 1;
	if (ps_start_utt(ps) < 0)
		return NULL;
	*step = 2;
	if (ps_process_raw(ps, pcm, n, FALSE, TRUE) < 0) {
		ps_end_utt(ps);
		return NULL;
	}
	*step = 3;
	if (ps_end_utt(ps) < 0)
		return NULL;
	*step = 0;
	return ps_get_hyp(ps, &score);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// decoder is one PocketSphinx decoder. It is not safe for concurrent use:
// local serialises the calls.
type decoder struct {
	ps *C.ps_decoder_t
}

func newDecoder(m modelFiles) (*decoder, error) {
	hmm, lm, dict := C.CString(m.hmm), C.CString(m.lm), C.CString(m.dict)
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(lm))
	defer C.free(unsafe.Pointer(dict))
	ps := C.strata_ps_new(hmm, lm, dict)
	if ps == nil {
		return nil, fmt.Errorf("transcribe: %w: PocketSphinx could not load its model (files present but unreadable or damaged?)", ErrNoEngine)
	}
	return &decoder{ps: ps}, nil
}

// decode returns the transcript of pcm, host-order 16-bit samples at
// SampleRate, or "" when nothing was recognised.
func (d *decoder) decode(pcm []byte) (string, error) {
	n := len(pcm) / 2
	if n == 0 {
		return "", nil
	}
	var step C.int
	// pcm holds no Go pointers, so passing it to C is allowed; C does not
	// keep it after the call returns.
	hyp := C.strata_ps_decode(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(n), &step)
	if hyp == nil {
		if step != 0 {
			return "", fmt.Errorf("transcribe: PocketSphinx decoding failed (step %d)", int(step))
		}
		return "", nil
	}
	return strings.Join(strings.Fields(C.GoString(hyp)), " "), nil
}

func (d *decoder) free() {
	C.ps_free(d.ps)
	d.ps = nil
}
