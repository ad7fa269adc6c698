#include "window_fit.h"

#include <QEvent>
#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace ui {
namespace {

const QScreen* screenOf(const QWidget* window)
{
    return window->screen() ? window->screen() : QGuiApplication::primaryScreen();
}

void fitNow(QWidget* window)
{
    const QScreen* screen = screenOf(window);
    if (!screen)
        return;
    const QRect available = screen->availableGeometry();
    // The frame (title bar, borders) counts: known once shown, else the geometry alone.
    const QSize border = window->frameGeometry().size() - window->size();
    const QSize fitted = window->size().boundedTo(available.size() - border);
    if (fitted != window->size())
        window->resize(fitted);
    QRect frame = window->frameGeometry();
    if (!available.contains(frame)) {
        frame.moveLeft(std::clamp(frame.left(), available.left(),
            std::max(available.left(), available.right() - frame.width() + 1)));
        frame.moveTop(std::clamp(frame.top(), available.top(),
            std::max(available.top(), available.bottom() - frame.height() + 1)));
        window->move(frame.topLeft());
    }
}

// Fits the window again when it is shown, once its frame is known; a size set after the fit (a
// screenshot's, a test's) is left as it was asked for.
class FitWhenShown : public QObject {
public:
    explicit FitWhenShown(QWidget* window)
        : QObject(window)
        , m_fitted(window->size())
    {
        window->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Show) {
            auto* window = static_cast<QWidget*>(watched);
            window->removeEventFilter(this);
            if (window->size() == m_fitted)
                fitNow(window);
            deleteLater();
        }
        return false;
    }

private:
    QSize m_fitted;
};

} // namespace

QString screenKey(const QString& key, const QWidget* window)
{
    const QScreen* screen = screenOf(window);
    if (!screen)
        return key;
    const QString place = QStringLiteral("%1x%2@%3")
                              .arg(screen->geometry().width())
                              .arg(screen->geometry().height())
                              .arg(screen->devicePixelRatio());
    const qsizetype slash = key.lastIndexOf(u'/');
    if (slash < 0)
        return place + u'/' + key;
    return key.left(slash + 1) + place + key.mid(slash);
}

void fitOnScreen(QWidget* window)
{
    fitNow(window);
    if (!window->isVisible())
        new FitWhenShown(window);
}

bool restoreFittingGeometry(QWidget* window, const QByteArray& saved)
{
    const QScreen* screen = screenOf(window);
    if (saved.isEmpty() || !screen)
        return false;
    const QRect before = window->geometry();
    if (!window->restoreGeometry(saved))
        return false;
    if (screen->availableGeometry().contains(window->geometry()))
        return true;
    window->setGeometry(before);
    return false;
}

} // namespace ui
