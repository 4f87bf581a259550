package tutormemory

import "context"

// bearerToken puts `authorization: Bearer <token>` on every call.
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity is false so that development servers on loopback, which speak
// plaintext, can be called with a token too; give Options.Credentials anywhere else.
func (bearerToken) RequireTransportSecurity() bool { return false }
