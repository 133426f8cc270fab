package vault

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vaulttest"
)

func TestNoteLanguage(t *testing.T) {
	for _, tc := range []struct {
		name, text, lang, script string
	}{
		{"English", "# Leases\n\nA lease expires when its holder stops renewing it. The server should retry with jitter, and the client has to check which node holds it.", "English", "Latin"},
		{"French", "# Baux\n\nUn bail expire quand son détenteur cesse de le renouveler. Le serveur doit réessayer avec une attente aléatoire, et le client vérifie qui le détient dans cette grappe.", "French", "Latin"},
		{"German", "# Leases\n\nEin Lease läuft ab, wenn der Inhaber es nicht mehr erneuert. Der Server sollte es mit Jitter erneut versuchen, und der Client prüft, wer es hält.", "German", "Latin"},
		{"Spanish", "# Arrendamientos\n\nUn arrendamiento caduca cuando su titular deja de renovarlo. El servidor debe reintentar con una espera aleatoria, y el cliente comprueba quién lo tiene en el grupo.", "Spanish", "Latin"},
		{"Portuguese", "# Concessões\n\nUma concessão expira quando o seu titular não a renova. O servidor deve tentar de novo com uma espera aleatória, e o cliente verifica quem a detém no grupo.", "Portuguese", "Latin"},
		{"Italian", "# Lease\n\nUn lease scade quando il suo detentore non lo rinnova più. Il server deve riprovare con un'attesa casuale, e il client controlla chi lo detiene nel gruppo.", "Italian", "Latin"},
		{"Dutch", "# Leases\n\nEen lease verloopt als de houder het niet meer vernieuwt. De server moet het opnieuw proberen met een willekeurige wachttijd, en de client kijkt wie het heeft.", "Dutch", "Latin"},
		{"Russian", "# Аренда\n\nАренда истекает, если её держатель не продлевает её вовремя. Сервер должен повторить попытку, и клиент проверяет, кто её держит.", "Russian", "Cyrillic"},
		{"Ukrainian", "# Оренда\n\nОренда спливає, якщо її власник не подовжує її вчасно. Сервер має повторити спробу, і клієнт перевіряє, хто її тримає, але це не завжди так.", "Ukrainian", "Cyrillic"},
		// A Chinese note full of English names is still Chinese.
		{"Chinese", "# 插件\n\n用 Templater 和 Dataview 插件管理笔记模板和查询，在设置里打开社区插件。", "Chinese", "Han"},
		{"Japanese", "# ノート\n\nノートをインポートする方法を説明します。設定画面から読み込みを選んでください。", "Japanese", "Hiragana"},
		// Japanese with more kanji than kana is still Japanese.
		{"Japanese, kanji-heavy", "# 同期\n\n同期機能は複数端末間で保管庫を同一状態に保つ。設定画面で同期対象を選択する。", "Japanese", "Han"},
		{"Korean", "# 동기화\n\n동기화 기능은 여러 기기에서 노트를 같은 상태로 유지합니다.", "Korean", "Hangul"},
		{"Greek", "# Συγχρονισμός\n\nΟ συγχρονισμός κρατά τις σημειώσεις ίδιες σε κάθε συσκευή.", "Greek", "Greek"},
		{"Arabic: the script only", "# مزامنة\n\nتحافظ المزامنة على تطابق الملاحظات في جميع الأجهزة.", "", "Arabic"},
		// A language with no list: Latin script, no name.
		{"Swedish", "# Synk\n\nSynkronisering håller dina anteckningar likadana på varje enhet, och du väljer vilka mappar som synkas.", "", "Latin"},
		// Code and frontmatter do not count: the prose is French.
		{"French with code", "---\ntype: note\ntopics: [the, and, of]\n---\n# Boucle\n\n```go\nfor i := range n { if x == nil && y != nil { return } }\n// the loop is for the items and the keys of the map, which are not sorted\n```\n\nLa boucle parcourt les éléments dans un ordre qui n'est pas fixé, et le test vérifie `the and of` pour cette raison.", "French", "Latin"},
		{"too short", "# A\n\nok", "", ""},
		{"no letters", "1234 5678 !!", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lang, script := NoteLanguage([]byte(tc.text))
			if lang != tc.lang || script != tc.script {
				t.Errorf("NoteLanguage = %q, %q; want %q, %q", lang, script, tc.lang, tc.script)
			}
		})
	}
}

func TestFilesLanguages(t *testing.T) {
	en := "# Sync\n\nSync keeps your notes the same on every device, and you can choose which folders are synced.\n"
	fr := "# Synchro\n\nLa synchronisation garde les notes identiques sur tous les appareils, et vous choisissez les dossiers.\n"
	zh := "# 同步\n\n同步功能可以在多台设备之间保持笔记一致。\n"
	code := "# Config\n\nkeepalive_timeout 65; worker_connections 1024; gzip on; sendfile on; tcp_nopush on;\n"
	files := func(texts ...string) []File {
		var out []File
		for _, s := range texts {
			out = append(out, File{Raw: []byte(s)})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		files []File
		want  Languages
		main  Languages
	}{
		{"one language", files(en, en, en), Languages{{"English", "Latin", 3}}, Languages{{"English", "Latin", 3}}},
		// A Latin note that names no language counts for the vault's
		// Latin-script language.
		{"unnamed Latin folded", files(en, en, code), Languages{{"English", "Latin", 3}}, Languages{{"English", "Latin", 3}}},
		{"unnamed Latin alone", files(zh, zh, code), Languages{{"Chinese", "Han", 2}, {"", "Latin", 1}}, Languages{{"Chinese", "Han", 2}, {"", "Latin", 1}}},
		{"mostly one", files(zh, zh, zh, zh, zh, zh, zh, zh, en, fr), Languages{{"Chinese", "Han", 8}, {"English", "Latin", 1}, {"French", "Latin", 1}}, Languages{{"Chinese", "Han", 8}}},
		{"mixed", files(zh, zh, zh, en, en, fr), Languages{{"Chinese", "Han", 3}, {"English", "Latin", 2}, {"French", "Latin", 1}}, Languages{{"Chinese", "Han", 3}, {"English", "Latin", 2}}},
		{"empty", files("", "123"), Languages{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FilesLanguages(tc.files)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FilesLanguages = %+v, want %+v", got, tc.want)
			}
			if m := got.Main(); !reflect.DeepEqual(m, tc.main) {
				t.Errorf("Main = %+v, want %+v", m, tc.main)
			}
		})
	}
}

func TestDetectLanguages(t *testing.T) {
	root := t.TempDir()
	vaulttest.WriteTree(t, root, map[string]string{
		"a.md":           "# Notes\n\nThese notes are written in English, and the server says so to its callers.\n",
		"templates/t.md": "# Modèle\n\nCe modèle est écrit en français, et il n'est pas une note du coffre.\n",
	}, testTime)
	got, err := DetectLanguages(context.Background(), root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Languages{{"English", "Latin", 1}}); !reflect.DeepEqual(got, want) {
		t.Errorf("DetectLanguages = %+v, want %+v (templates are not notes)", got, want)
	}
}

// TestStopWordsDistinct: no word is on every list of a script, which would
// count for all of them and tell none apart.
func TestStopWordsDistinct(t *testing.T) {
	for script, lists := range stopWords {
		seen := map[string]int{}
		for _, list := range lists {
			for w := range list {
				seen[w]++
				if w != strings.ToLower(w) {
					t.Errorf("%s: %q is not lower-case: words are compared lower-cased", script, w)
				}
			}
		}
		for w, n := range seen {
			if n == len(lists) {
				t.Errorf("%s: %q is on every list", script, w)
			}
		}
	}
}

// TestDescribe: a vault's main languages named as prose, the way status,
// /health and the server's instructions name them.
func TestDescribe(t *testing.T) {
	en := Language{Name: "English", Script: "Latin", Notes: 90}
	zh := Language{Name: "Chinese", Script: "Han", Notes: 60}
	fr := Language{Name: "French", Script: "Latin", Notes: 30}
	cy := Language{Script: "Cyrillic", Notes: 10}
	for _, tc := range []struct {
		name string
		ls   Languages
		want string
	}{
		{"none counted", nil, ""},
		{"one language", Languages{en}, "English"},
		{"a dominant one hides the rest", Languages{en, {Name: "German", Script: "Latin", Notes: 5}}, "English"},
		{"two main ones", Languages{zh, fr}, "Chinese and French"},
		{"three main ones", Languages{{Name: "English", Script: "Latin", Notes: 40}, zh, fr}, "English, Chinese and French"},
		{"only the script known", Languages{cy}, "a language written in Cyrillic script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ls.Describe(); got != tc.want {
				t.Errorf("Describe() = %q, want %q", got, tc.want)
			}
		})
	}
}
