package connectors

// mergePatch applies an RFC 7386 JSON merge patch to target: objects merge
// recursively, null deletes a member, anything else replaces. Written here
// rather than imported: it is the whole algorithm of the RFC (section 2).
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	} else {
		copied := make(map[string]any, len(t))
		for k, v := range t {
			copied[k] = v
		}
		t = copied
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}
