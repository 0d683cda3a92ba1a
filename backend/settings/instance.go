package settings

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// The instance settings the admin page edits (besides the sign-up mode,
// which backend/auth owns, and the quota, backend/files').
const (
	SettingInstanceName = "instance_name"
	SettingDefaultModel = "default_model"
)

// Instance is the service for the instance-wide settings.
type Instance struct {
	db       *store.DB
	accounts *auth.Accounts
	files    *files.Service // nil: no quota
}

// NewInstance returns the service.
func NewInstance(db *store.DB, accounts *auth.Accounts, files *files.Service) *Instance {
	return &Instance{db: db, accounts: accounts, files: files}
}

// InstanceSettings are the instance-wide settings.
type InstanceSettings struct {
	InstanceName string          `json:"instanceName"`
	SignUpMode   auth.SignUpMode `json:"signUpMode"`
	DefaultModel ids.ModelID     `json:"defaultModel"`
	// FilesQuotaMB caps what each person's files may take; 0: no cap.
	FilesQuotaMB int64 `json:"filesQuotaMB"`
}

// InstancePatch changes the settings that are set.
type InstancePatch struct {
	InstanceName *string          `json:"instanceName,omitempty"`
	SignUpMode   *auth.SignUpMode `json:"signUpMode,omitempty"`
	DefaultModel *ids.ModelID     `json:"defaultModel,omitempty"`
	FilesQuotaMB *int64           `json:"filesQuotaMB,omitempty"`
}

// Name is the instance's name.
func (s *Instance) Name(ctx context.Context) (string, error) {
	name, _, err := s.db.Setting(ctx, SettingInstanceName)
	return name, err
}

// Stats are the database's path, size and row counts, for administrators.
type Stats struct {
	Path   string
	Bytes  int64
	Counts map[string]int64
}

// Stats reads the database's figures.
func (s *Instance) Stats(ctx context.Context) (Stats, error) {
	counts, err := s.db.Counts(ctx)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Path: s.db.Path(), Bytes: s.db.Size(), Counts: counts}, nil
}

// Get reads the instance settings.
func (s *Instance) Get(ctx context.Context) (InstanceSettings, error) {
	name, err := s.Name(ctx)
	if err != nil {
		return InstanceSettings{}, err
	}
	mode, err := s.accounts.SignUpMode(ctx)
	if err != nil {
		return InstanceSettings{}, err
	}
	var quota int64
	if s.files != nil {
		quota = s.files.Quota(ctx) >> 20
	}
	return InstanceSettings{InstanceName: name, SignUpMode: mode, DefaultModel: defaultModel(ctx, s.db),
		FilesQuotaMB: quota}, nil
}

// defaultModel is the administrator's default model for new chats (0:
// none).
func defaultModel(ctx context.Context, db *store.DB) ids.ModelID {
	v, _, _ := db.Setting(ctx, SettingDefaultModel)
	n, _ := strconv.ParseInt(v, 10, 64)
	return ids.ModelID(n)
}

// Set changes the instance settings that are set in the patch; admin is
// the administrator doing it.
func (s *Instance) Set(ctx context.Context, admin ids.UserID, p InstancePatch) (InstanceSettings, error) {
	if p.InstanceName != nil {
		name := strings.TrimSpace(*p.InstanceName)
		if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > 64 {
			return InstanceSettings{}, apperr.New(apperr.Invalid, "The instance name is 1 to 64 characters.")
		}
		if err := s.db.SetSetting(ctx, SettingInstanceName, name); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.SignUpMode != nil {
		if err := s.accounts.SetSignUpMode(ctx, *p.SignUpMode); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.DefaultModel != nil {
		if *p.DefaultModel != 0 {
			m, err := s.db.ModelByID(ctx, admin, *p.DefaultModel)
			if err != nil {
				return InstanceSettings{}, store.Kinded(err, "model")
			}
			if m.OwnerID != nil {
				return InstanceSettings{}, apperr.New(apperr.Invalid, "The default model must be one of the shared connections' models.")
			}
		}
		if err := s.db.SetSetting(ctx, SettingDefaultModel, strconv.FormatInt(int64(*p.DefaultModel), 10)); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.FilesQuotaMB != nil {
		if *p.FilesQuotaMB < 0 || *p.FilesQuotaMB > 1<<30 {
			return InstanceSettings{}, apperr.New(apperr.Invalid, "The storage for each person is a number of MB, 0 for no limit.")
		}
		if err := s.db.SetSetting(ctx, files.SettingQuotaMB, strconv.FormatInt(*p.FilesQuotaMB, 10)); err != nil {
			return InstanceSettings{}, err
		}
	}
	return s.Get(ctx)
}
