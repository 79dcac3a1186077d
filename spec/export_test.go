package spec

// EncodeRelabelledPair encodes s relabelled by bookie permutation bp and
// client permutation cp (of the ids in use) in the two ways the package
// has: in one pass (encode with a relabeller, as the canonicalizer does)
// and by building the relabelled state (permute) and encoding it. They
// must agree (TestEncodeRelabelled).
func (m *Model) EncodeRelabelledPair(s *State, bp, cp []int8) (fused, built []byte) {
	var rl relabeller
	rl.pm = relabelling(bp, cp)
	rl.setInverse()
	fused = m.encode(nil, s, &rl)
	var perm State
	m.permute(&perm, s, &rl.pm)
	return fused, m.Encode(nil, &perm)
}
