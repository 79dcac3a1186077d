package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// A record file is a sequence of records, each a short head (a few
// varints the caller formats) and a payload (a state encoding, say),
// written once and read sequentially. It is what a search on disk keeps
// its BFS levels, parent links and batches for other shards in.
//
// Records are gathered into blocks of about recBlockBytes; within a block
// each payload is stored as the length of the prefix it shares with the
// previous payload plus the rest (consecutive states of a BFS level differ
// in a few bytes), and the block is compressed with zstd. On the shipped
// configuration's levels this takes 117-byte encodings to about 2 bytes
// per state. Compression runs in a goroutine per writer and decompression
// ahead of the reader, so neither holds up the search.
//
// Each record also has a key, a number that never decreases from one
// record to the next (a parent's rank, a state's rank), stored as the
// difference from the previous record's key: mostly 0 or 1, which
// compresses to almost nothing.
//
// On disk a block is a header
//
//	byte    recMagic (zstd) or recMagicS2 (S2)
//	uvarint raw length, compressed length, records, first key, first index
//
// followed by the compressed bytes (zstd with its checksum, or S2:
// CreateFastRecWriter's files, transient ones where compression
// speed matters more than size). The first
// key and first index (records before the block) let a reader looking for
// one record skip whole blocks (Seek, SeekIndex). Raw block layout, per
// record: uvarint key difference (0 for the block's first), uvarint head
// length, head, uvarint shared prefix, uvarint suffix length, suffix.
const (
	recBlockBytes = 1 << 20
	recMagic      = 0xB7
	recMagicS2    = 0xB8
	maxRecHeader  = 1 + 5*binary.MaxVarintLen64
)

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithWindowSize(recBlockBytes), zstd.WithEncoderCRC(true))
		if err != nil {
			panic(err)
		}
		zstdDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(4*recBlockBytes))
		if err != nil {
			panic(err)
		}
	})
	return zstdEnc, zstdDec
}

// blockPool recycles raw block buffers across writers and readers: a
// search opens several record files per level, most of them small.
var blockPool = sync.Pool{New: func() any { return make([]byte, 0, 64<<10) }}

func getBlock() []byte { return blockPool.Get().([]byte)[:0] }

func putBlock(b []byte) {
	if cap(b) <= 2*recBlockBytes {
		//lint:ignore SA6002 the pool holds byte slices; boxing the header costs less than a pointer per block
		blockPool.Put(b[:0])
	}
}

type recBlock struct {
	raw   []byte
	nrec  uint64
	key   uint64
	index uint64
}

// RecWriter writes a record file.
type RecWriter struct {
	path  string
	f     *os.File
	fast  bool // S2 rather than zstd
	raw   []byte
	prev  []byte
	nrec  uint64
	key   uint64 // first key of the block
	last  uint64 // last key appended
	total int64
	queue chan recBlock
	done  chan struct{}

	mu      sync.Mutex
	err     error // first error of the compressor
	written int64 // bytes written to the file
}

// CreateRecWriter creates (truncating) the record file at path.
func CreateRecWriter(path string) (*RecWriter, error) { return createRecWriter(path, false) }

// CreateFastRecWriter is CreateRecWriter with S2 compression: several
// times faster than zstd, about twice the size on BFS levels; for files
// that are written and read once.
func CreateFastRecWriter(path string) (*RecWriter, error) { return createRecWriter(path, true) }

func createRecWriter(path string, fast bool) (*RecWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state: creating %s: %w", path, err)
	}
	w := &RecWriter{path: path, f: f, fast: fast, queue: make(chan recBlock, 1), done: make(chan struct{})}
	go w.compress()
	return w, nil
}

func (w *RecWriter) compress() {
	defer close(w.done)
	enc, _ := codecs()
	bw := bufio.NewWriterSize(w.f, 256<<10)
	var comp []byte
	var hdr [maxRecHeader]byte
	for blk := range w.queue {
		magic := byte(recMagic)
		if w.fast {
			magic = recMagicS2
			comp = s2.Encode(comp[:cap(comp)], blk.raw)
		} else {
			comp = enc.EncodeAll(blk.raw, comp[:0])
		}
		h := append(hdr[:0], magic)
		h = binary.AppendUvarint(h, uint64(len(blk.raw)))
		h = binary.AppendUvarint(h, uint64(len(comp)))
		h = binary.AppendUvarint(h, blk.nrec)
		h = binary.AppendUvarint(h, blk.key)
		h = binary.AppendUvarint(h, blk.index)
		_, err1 := bw.Write(h)
		_, err2 := bw.Write(comp)
		w.mu.Lock()
		if err := errors.Join(err1, err2); err != nil && w.err == nil {
			w.err = fmt.Errorf("state: writing %s: %w", w.path, err)
		}
		w.written += int64(len(h) + len(comp))
		w.mu.Unlock()
		putBlock(blk.raw)
	}
	if err := bw.Flush(); err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = fmt.Errorf("state: writing %s: %w", w.path, err)
		}
		w.mu.Unlock()
	}
}

// Append adds a record with the given key, which must not be below the
// previous record's.
func (w *RecWriter) Append(key uint64, head, payload []byte) {
	if w.nrec == 0 {
		w.key, w.last = key, key
		if w.raw == nil {
			w.raw = getBlock()
		}
	}
	if key < w.last {
		panic(fmt.Sprintf("state: record key %d after %d in %s", key, w.last, w.path))
	}
	w.raw = binary.AppendUvarint(w.raw, key-w.last)
	w.last = key
	shared := commonPrefix(payload, w.prev)
	w.raw = binary.AppendUvarint(w.raw, uint64(len(head)))
	w.raw = append(w.raw, head...)
	w.raw = binary.AppendUvarint(w.raw, uint64(shared))
	w.raw = binary.AppendUvarint(w.raw, uint64(len(payload)-shared))
	w.raw = append(w.raw, payload[shared:]...)
	w.prev = append(w.prev[:0], payload...)
	w.nrec++
	w.total++
	if len(w.raw) >= recBlockBytes {
		w.ship()
	}
}

func (w *RecWriter) ship() {
	if w.nrec == 0 {
		return
	}
	w.queue <- recBlock{raw: w.raw, nrec: w.nrec, key: w.key, index: uint64(w.total) - w.nrec}
	w.raw, w.prev, w.nrec = nil, w.prev[:0], 0
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared eight bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Finish writes what is buffered, syncs and closes the file.
func (w *RecWriter) Finish() error {
	w.ship()
	close(w.queue)
	<-w.done
	err := w.err
	if err == nil {
		if err = w.f.Sync(); err != nil {
			err = fmt.Errorf("state: syncing %s: %w", w.path, err)
		}
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("state: closing %s: %w", w.path, cerr)
	}
	return err
}

// Abort closes and removes the file.
func (w *RecWriter) Abort() {
	w.ship()
	close(w.queue)
	<-w.done
	w.f.Close()
	os.Remove(w.path)
}

// RecReader reads a record file.
type RecReader struct {
	path string
	f    *os.File
	off  int64 // file offset of the next block header

	blk   []byte // raw block being read
	pos   int
	left  uint64 // records left in blk
	key   uint64 // current record's key
	head  []byte
	cur   []byte // current payload
	index int64  // index of the next record
	err   error

	// Read-ahead: a goroutine decompresses the next blocks.
	ahead chan aheadBlock
	free  chan []byte
	stop  chan struct{}
	wg    sync.WaitGroup
}

type aheadBlock struct {
	raw  []byte
	nrec uint64
	h    blockHeader
	err  error
}

// OpenRecReader opens the record file at path. With readAhead, blocks are
// decompressed ahead of Next by a goroutine (for streaming a whole file);
// without, Seek is available.
func OpenRecReader(path string, readAhead bool) (*RecReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("state: opening %s: %w", path, err)
	}
	r := &RecReader{path: path, f: f}
	if readAhead {
		r.ahead, r.free, r.stop = make(chan aheadBlock, 2), make(chan []byte, 4), make(chan struct{})
		r.wg.Add(1)
		go r.readAhead()
	}
	return r, nil
}

type blockHeader struct {
	rawLen, compLen, nrec, key, index uint64
	size                              int64 // header bytes
	s2                                bool
}

// header reads the block header at off; io.EOF at the end of the file.
func (r *RecReader) header(off int64) (blockHeader, error) {
	var buf [maxRecHeader]byte
	n, err := r.f.ReadAt(buf[:], off)
	if n == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return blockHeader{}, io.EOF
		}
		return blockHeader{}, err
	}
	b := buf[:n]
	if b[0] != recMagic && b[0] != recMagicS2 {
		return blockHeader{}, fmt.Errorf("state: %s is corrupt at offset %d", r.path, off)
	}
	h := blockHeader{s2: b[0] == recMagicS2}
	p := 1
	for _, v := range []*uint64{&h.rawLen, &h.compLen, &h.nrec, &h.key, &h.index} {
		x, k := binary.Uvarint(b[p:])
		if k <= 0 {
			return blockHeader{}, fmt.Errorf("state: %s is corrupt at offset %d", r.path, off)
		}
		*v, p = x, p+k
	}
	if h.rawLen > 4*recBlockBytes {
		return blockHeader{}, fmt.Errorf("state: %s is corrupt at offset %d", r.path, off)
	}
	h.size = int64(p)
	return h, nil
}

// load reads and decompresses the block at r.off into dst.
func (r *RecReader) load(dst []byte) ([]byte, blockHeader, error) {
	h, err := r.header(r.off)
	if err != nil {
		return dst, h, err
	}
	comp := make([]byte, h.compLen)
	if _, err := r.f.ReadAt(comp, r.off+h.size); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // a block cut short, not the end
		}
		return dst, h, fmt.Errorf("state: reading %s: %w", r.path, err)
	}
	var raw []byte
	if h.s2 {
		if n, derr := s2.DecodedLen(comp); derr != nil || uint64(n) != h.rawLen {
			err = errors.New("bad S2 block")
		} else {
			raw, err = s2.Decode(slices.Grow(dst[:0], n)[:n], comp)
		}
	} else {
		_, dec := codecs()
		raw, err = dec.DecodeAll(comp, dst[:0])
	}
	if err == nil && uint64(len(raw)) != h.rawLen {
		err = errors.New("length mismatch")
	}
	if err != nil {
		return dst, h, fmt.Errorf("state: %s is corrupt at offset %d: %w", r.path, r.off, err)
	}
	r.off += h.size + int64(h.compLen)
	return raw, h, nil
}

func (r *RecReader) readAhead() {
	defer r.wg.Done()
	defer close(r.ahead)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		default:
		}
		raw, h, err := r.load(buf)
		if errors.Is(err, io.EOF) {
			return
		}
		select {
		case r.ahead <- aheadBlock{raw: raw, nrec: h.nrec, h: h, err: err}:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// next makes the next block current; false at the end or on error.
func (r *RecReader) next() bool {
	if r.ahead != nil {
		if r.blk != nil {
			select {
			case r.free <- r.blk[:0]:
			default:
			}
			r.blk = nil
		}
		b, ok := <-r.ahead
		if !ok {
			return false
		}
		if b.err != nil {
			r.err = b.err
			return false
		}
		r.blk, r.pos, r.left = b.raw, 0, b.nrec
		r.key, r.index = b.h.key, int64(b.h.index)
	} else {
		raw, h, err := r.load(r.blk)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			return false
		}
		r.blk, r.pos, r.left = raw, 0, h.nrec
		r.key, r.index = h.key, int64(h.index)
	}
	r.cur = r.cur[:0]
	return true
}

// Next advances to the next record; false at the end or on error (Err).
func (r *RecReader) Next() bool {
	if r.err != nil {
		return false
	}
	for r.left == 0 {
		if !r.next() {
			return false
		}
	}
	b := r.blk[r.pos:]
	dk, k0 := binary.Uvarint(b)
	if k0 <= 0 {
		return r.corrupt()
	}
	b = b[k0:]
	hl, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < hl {
		return r.corrupt()
	}
	r.key += dk
	r.head = b[k : k+int(hl)]
	b = b[k+int(hl):]
	p := k0 + k + int(hl)
	shared, k1 := binary.Uvarint(b)
	if k1 <= 0 || shared > uint64(len(r.cur)) {
		return r.corrupt()
	}
	suffix, k2 := binary.Uvarint(b[k1:])
	if k2 <= 0 || uint64(len(b)-k1-k2) < suffix {
		return r.corrupt()
	}
	r.cur = append(r.cur[:shared], b[k1+k2:k1+k2+int(suffix)]...)
	r.pos += p + k1 + k2 + int(suffix)
	r.left--
	r.index++
	return true
}

func (r *RecReader) corrupt() bool {
	r.err = fmt.Errorf("state: %s is corrupt in record %d", r.path, r.index)
	return false
}

// Key is the current record's key.
func (r *RecReader) Key() uint64 { return r.key }

// Index is the current record's index in the file.
func (r *RecReader) Index() int64 { return r.index - 1 }

// Head is the current record's head, valid until the next call to Next.
func (r *RecReader) Head() []byte { return r.head }

// Payload is the current record's payload, valid until the next Next.
func (r *RecReader) Payload() []byte { return r.cur }

// Err is the first error met.
func (r *RecReader) Err() error { return r.err }

// Seek positions the reader (opened without read-ahead, before any Next)
// at the start of the last block whose first key is <= key, so that Next
// then reads the records from there on. Blocks before it are not read.
func (r *RecReader) Seek(key uint64) error {
	return r.seek(func(h blockHeader) bool { return h.key <= key })
}

// SeekIndex is Seek by record index: Next then reads from the start of
// the block holding record i.
func (r *RecReader) SeekIndex(i int64) error {
	return r.seek(func(h blockHeader) bool { return int64(h.index) <= i })
}

// seek moves to the last block whose header satisfies before (which holds
// for a prefix of the blocks).
func (r *RecReader) seek(before func(blockHeader) bool) error {
	if r.ahead != nil {
		return errors.New("state: Seek on a read-ahead reader")
	}
	best := int64(-1)
	for off := int64(0); ; {
		h, err := r.header(off)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !before(h) {
			break
		}
		best = off
		off += h.size + int64(h.compLen)
	}
	if best >= 0 {
		r.off = best
	}
	return nil
}

// Close stops the read-ahead and closes the file.
func (r *RecReader) Close() {
	if r.stop != nil {
		close(r.stop)
		for range r.ahead {
		}
		r.wg.Wait()
		r.stop = nil
	}
	r.f.Close()
}
