package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// A probe's answer may carry what only a holder of the secret may read
// (the server's whole identity, from which a prover greets its client
// early: internal/node): sealed with AES-256-GCM under a key made from the
// secret with a label of its own, and bound to the probe's challenge, so
// that it opens only for the prover that sent that challenge. It is given
// only to a prover that asks for it with [SealAsk], which only a holder of
// the secret can make: anyone else learns not even its length.

const (
	sealLabel = "majordomus-mcp sealed v1"
	askLabel  = "majordomus-mcp sealed ask v1"
)

// SealAsk is how a prover holding secret asks that the answer to
// challenge carry what is sealed for it. It tells nothing of the secret,
// the token or any proof (a label of its own).
func SealAsk(secret, challenge string) string { return mac(secret, askLabel+"\n"+challenge) }

// AsksSealed reports whether ask is SealAsk's for secret and challenge.
func AsksSealed(ask, secret, challenge string) bool {
	return secret != "" && challenge != "" && hmac.Equal([]byte(ask), []byte(SealAsk(secret, challenge)))
}

// aead is the cipher sealing for secret.
func aead(secret string) (cipher.AEAD, error) {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(sealLabel))
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal seals plain for the holder of secret that sent challenge.
func Seal(secret, challenge string, plain []byte) (string, error) {
	c, err := aead(secret)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, c.NonceSize(), c.NonceSize()+len(plain)+c.Overhead())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(c.Seal(nonce, nonce, plain, []byte(challenge))), nil
}

// Open is what Seal sealed for secret and challenge, or an error.
func Open(secret, challenge, sealed string) ([]byte, error) {
	c, err := aead(secret)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < c.NonceSize() {
		return nil, errors.New("not a sealed answer")
	}
	return c.Open(nil, raw[:c.NonceSize()], raw[c.NonceSize():], []byte(challenge))
}
