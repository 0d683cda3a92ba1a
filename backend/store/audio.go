package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// AudioSettings are the speech endpoints of one scope: the instance
// (UserID nil) or one user's overrides. Keys are Fernet tokens.
type AudioSettings struct {
	UserID    *ids.UserID
	STTURL    string
	STTKeyEnc string
	STTModel  string
	TTSURL    string
	TTSKeyEnc string
	TTSModel  string
	TTSVoice  string
	// Voices is the voice list to offer where the server has no list.
	Voices    []string
	UpdatedAt int64
}

// AudioSettings reads the instance's settings (user nil) or one user's
// overrides; a scope with none stored reads as zero values.
func (db *DB) AudioSettings(ctx context.Context, user *ids.UserID) (AudioSettings, error) {
	out := AudioSettings{UserID: user}
	var voices string
	err := db.r.QueryRowContext(ctx, `
		SELECT stt_url, stt_key_enc, stt_model, tts_url, tts_key_enc, tts_model, tts_voice, voices, updated_at
		FROM audio_settings WHERE user_id IS ? ORDER BY id LIMIT 1`, nullable(user)).
		Scan(&out.STTURL, &out.STTKeyEnc, &out.STTModel, &out.TTSURL, &out.TTSKeyEnc, &out.TTSModel, &out.TTSVoice, &voices, &out.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		out.Voices = []string{}
		return out, nil
	}
	if err != nil {
		return AudioSettings{}, fmt.Errorf("read audio settings: %w", err)
	}
	if json.Unmarshal([]byte(voices), &out.Voices) != nil || out.Voices == nil {
		out.Voices = []string{}
	}
	return out, nil
}

// SetAudioSettings replaces the settings of s.UserID's scope.
func (db *DB) SetAudioSettings(ctx context.Context, s AudioSettings) error {
	voices, err := json.Marshal(s.Voices)
	if err != nil || s.Voices == nil {
		voices = []byte("[]")
	}
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM audio_settings WHERE user_id IS ?`, nullable(s.UserID)); err != nil {
			return fmt.Errorf("replace audio settings: %w", err)
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO audio_settings (user_id, stt_url, stt_key_enc, stt_model, tts_url, tts_key_enc, tts_model, tts_voice, voices, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nullable(s.UserID), s.STTURL, s.STTKeyEnc, s.STTModel, s.TTSURL, s.TTSKeyEnc, s.TTSModel, s.TTSVoice, string(voices), nowMillis())
		if err != nil {
			return fmt.Errorf("store audio settings: %w", err)
		}
		return nil
	})
}
