package ocf

// This file is an addition of lakehouse-exporter's copy of
// github.com/twmb/avro v1.8.0 (see ../PATCHED.md): the deflate codec
// reuses its compressors and decompressors.
//
// flate.NewWriter allocates and clears about a megabyte of tables, and
// flate.NewReader tens of kilobytes, for every block. iceberg-go writes
// each manifest and manifest list as a deflate container of a block or
// two, a few per commit, and reads them by the thousand: making the
// compressor anew was a sixth of the CPU of an Iceberg commit.

import (
	"compress/flate"
	"io"
	"sync"
)

// deflateWriters holds idle compressors by level: index level-flate.HuffmanOnly.
var deflateWriters [flate.BestCompression - flate.HuffmanOnly + 1]sync.Pool

func pooledDeflateWriter(dst io.Writer, level int) (*flate.Writer, error) {
	if i := level - flate.HuffmanOnly; i >= 0 && i < len(deflateWriters) {
		if w, ok := deflateWriters[i].Get().(*flate.Writer); ok {
			w.Reset(dst)
			return w, nil
		}
	}
	return flate.NewWriter(dst, level)
}

// releaseDeflateWriter takes back a compressor once it was closed.
func releaseDeflateWriter(w *flate.Writer, level int) {
	if i := level - flate.HuffmanOnly; i >= 0 && i < len(deflateWriters) {
		deflateWriters[i].Put(w)
	}
}

var deflateReaders sync.Pool

func pooledDeflateReader(src io.Reader) io.ReadCloser {
	if r, ok := deflateReaders.Get().(io.ReadCloser); ok {
		if err := r.(flate.Resetter).Reset(src, nil); err == nil {
			return r
		}
	}
	return flate.NewReader(src)
}

// releaseDeflateReader closes r and takes it back; Reset clears whatever
// state (an error, a partial block) it was left in.
func releaseDeflateReader(r io.ReadCloser) {
	r.Close()
	deflateReaders.Put(r)
}
